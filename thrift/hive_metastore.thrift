// The subset of the Apache Hive Metastore (HMS) Thrift interface that colstats serves.
//
// Every struct, field id, field type, method, argument id and exception id declared here is
// wire-identical to Hive Metastore 4.x. Fields and methods that HMS has and colstats does not
// use are left out: Thrift readers skip unknown fields, and the server answers an unknown
// method with UNKNOWN_METHOD. Where older clients (the Hive 2.3 Java client, Python packages
// generated from 2.x/3.x IDLs) differ, a comment says how they are served.
//
// The Python code generated from this file lives in hive_metastore_thrift/ and is rebuilt by
// scripts/generate_thrift.sh; never edit it by hand.

namespace py hive_metastore_thrift
namespace java org.apache.hadoop.hive.metastore.api

// ---------------------------------------------------------------------------------------------
// Exceptions. Each carries a single message; clients branch on the type, not the text.

exception MetaException { 1: string message }
exception UnknownTableException { 1: string message }
exception UnknownDBException { 1: string message }
exception AlreadyExistsException { 1: string message }
exception InvalidPartitionException { 1: string message }
exception UnknownPartitionException { 1: string message }
exception InvalidObjectException { 1: string message }
exception NoSuchObjectException { 1: string message }
exception InvalidOperationException { 1: string message }
exception ConfigValSecurityException { 1: string message }
exception InvalidInputException { 1: string message }
// The exceptions of the lock calls (and of Hive's ACID transactions, which colstats refuses).
exception NoSuchTxnException { 1: string message }
exception TxnAbortedException { 1: string message }
exception TxnOpenException { 1: string message }
exception NoSuchLockException { 1: string message }

// ---------------------------------------------------------------------------------------------
// Metadata.

enum PrincipalType {
  USER = 1,
  ROLE = 2,
  GROUP = 3,
}

enum SerdeType {
  HIVE = 1,
  SCHEMA_REGISTRY = 2,
}

enum DatabaseType {
  NATIVE = 1,
  REMOTE = 2,
}

struct FieldSchema {
  1: string name,
  2: string type,
  3: string comment
}

struct EnvironmentContext {
  1: map<string, string> properties
}

struct SerDeInfo {
  1: string name,
  2: string serializationLib,
  3: map<string, string> parameters,
  4: optional string description,
  5: optional string serializerClass,
  6: optional string deserializerClass,
  7: optional SerdeType serdeType
}

struct Order {
  1: string col,
  2: i32 order
}

struct SkewedInfo {
  1: list<string> skewedColNames,
  2: list<list<string>> skewedColValues,
  3: map<list<string>, string> skewedColValueLocationMaps,
}

struct StorageDescriptor {
  1: list<FieldSchema> cols,
  2: string location,
  3: string inputFormat,
  4: string outputFormat,
  5: bool compressed,
  6: i32 numBuckets,
  7: SerDeInfo serdeInfo,
  8: list<string> bucketCols,
  9: list<Order> sortCols,
  10: map<string, string> parameters,
  11: optional SkewedInfo skewedInfo,
  12: optional bool storedAsSubDirectories
}

// Field 5 (privileges, a PrincipalPrivilegeSet) is not declared: colstats keeps no grants. The
// Hive 2.3 Java client has fields 1-8 only.
struct Database {
  1: string name,
  2: string description,
  3: string locationUri,
  4: map<string, string> parameters,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional string catalogName,
  9: optional i32 createTime,
  10: optional string managedLocationUri,
  11: optional DatabaseType type,
  12: optional string connector_name,
  13: optional string remote_dbname
}

// Field 13 (privileges) is not declared: colstats keeps no grants. Field 16 is CreationMetadata
// in 3.x+ but a catName string in the Hive 2.3 Java client; it is not declared so that both are
// skipped on read. Fields 26 (fileMetadata), 27 (dictionary) and 28 (txnId) are not declared.
struct Table {
  1: string tableName,
  2: string dbName,
  3: string owner,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: i32 retention,
  7: StorageDescriptor sd,
  8: list<FieldSchema> partitionKeys,
  9: map<string, string> parameters,
  10: string viewOriginalText,
  11: string viewExpandedText,
  12: string tableType,
  14: optional bool temporary = false,
  15: optional bool rewriteEnabled,
  17: optional string catName,
  18: optional PrincipalType ownerType = PrincipalType.USER,
  19: optional i64 writeId = -1,
  20: optional bool isStatsCompliant,
  21: optional ColumnStatistics colStats,
  22: optional i8 accessType,
  23: optional list<string> requiredReadCapabilities,
  24: optional list<string> requiredWriteCapabilities,
  25: optional i64 id
}

// alter_table_req (Hive 4). expectedParameterKey and expectedParameterValue (HIVE-26882): the
// alter is made only while the stored table parameter has that value, as with the environment
// context's expected_parameter_key and expected_parameter_value.
struct AlterTableRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required Table table,
  5: optional EnvironmentContext environmentContext,
  6: optional i64 writeId = -1,
  7: optional string validWriteIdList,
  8: optional list<string> processorCapabilities,
  9: optional string processorIdentifier,
  10: optional string expectedParameterKey,
  11: optional string expectedParameterValue
}

struct AlterTableResponse {
}

// Field 8 (privileges) and 13 (fileMetadata) are not declared: colstats keeps no grants.
struct Partition {
  1: list<string> values,
  2: string dbName,
  3: string tableName,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: StorageDescriptor sd,
  7: map<string, string> parameters,
  9: optional string catName,
  10: optional i64 writeId = -1,
  11: optional bool isStatsCompliant,
  12: optional ColumnStatistics colStats
}

// Fields 8-10 (and AddPartitionsResult's 3) are in newer 4.x IDLs only: a client that sets
// skipColumnSchemaForPartition sends partitions without sd.cols and their columns once, in
// partitionColSchema, and expects them back that way. The Hive 2.3 client has fields 1-6.
struct AddPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<Partition> parts,
  4: required bool ifNotExists,
  5: optional bool needResult = true,
  6: optional string catName,
  7: optional string validWriteIdList,
  8: optional bool skipColumnSchemaForPartition,
  9: optional list<FieldSchema> partitionColSchema,
  10: optional EnvironmentContext environmentContext
}

struct AddPartitionsResult {
  1: optional list<Partition> partitions,
  2: optional bool isStatsCompliant,
  3: optional list<FieldSchema> partitionColSchema
}

// Alter partitions. Fields 8 and 9 are in newer 4.x IDLs only: a client that sets
// skipColumnSchemaForPartition sends partitions without sd.cols and their columns once, in
// partitionColSchema. Not in the Hive 2.3 client (nor is alter_partitions_req).
struct AlterPartitionsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<Partition> partitions,
  5: optional EnvironmentContext environmentContext,
  6: optional i64 writeId = -1,
  7: optional string validWriteIdList,
  8: optional bool skipColumnSchemaForPartition,
  9: optional list<FieldSchema> partitionColSchema
}

struct AlterPartitionsResponse {
}

// Drop partitions by name or by expression. An expression is a Kryo-serialized Hive
// ExprNodeDesc. Field 10 (skipColumnSchemaForPartition, newer 4.x, only trims the result) is
// not declared.
struct DropPartitionsExpr {
  1: required binary expr,
  2: optional i32 partArchiveLevel
}

union RequestPartsSpec {
  1: list<string> names,
  2: list<DropPartitionsExpr> exprs
}

struct DropPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required RequestPartsSpec parts,
  4: optional bool deleteData,
  5: optional bool ifExists = true,
  6: optional bool ignoreProtection,
  7: optional EnvironmentContext environmentContext,
  8: optional bool needResult = true,
  9: optional string catName
}

struct DropPartitionsResult {
  1: optional list<Partition> partitions
}

// ---------------------------------------------------------------------------------------------
// Table requests.

// The Hive 2.3 Java client knows TEST_CAPABILITY only; values travel as i32 either way.
enum ClientCapability {
  TEST_CAPABILITY = 1,
  INSERT_ONLY_TABLES = 2,
}

struct ClientCapabilities {
  1: required list<ClientCapability> values
}

// The Hive 2.3 client sends fields 1-3 only. HMS has no field 5. engine has no default in
// earlier 4.x IDLs; a missing engine means "hive".
struct GetTableRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional ClientCapabilities capabilities,
  4: optional string catName,
  6: optional string validWriteIdList,
  7: optional bool getColumnStats,
  8: optional list<string> processorCapabilities,
  9: optional string processorIdentifier,
  10: optional string engine = "hive",
  11: optional i64 id = -1
}

// The Hive 2.3 client reads field 1 only.
struct GetTableResult {
  1: required Table table,
  2: optional bool isStatsCompliant
}

// Field 7 (projectionSpec, a GetProjectionsSpec) is not declared: whole tables are returned,
// which a projection allows. The Hive 2.3 client sends fields 1-3 only.
struct GetTablesRequest {
  1: required string dbName,
  2: optional list<string> tblNames,
  3: optional ClientCapabilities capabilities,
  4: optional string catName,
  5: optional list<string> processorCapabilities,
  6: optional string processorIdentifier,
  8: optional string tablesPattern
}

struct GetTablesResult {
  1: required list<Table> tables
}

// The Hive 2.3 client reads fields 1-4; 6 and 7 are in newer 4.x IDLs only.
struct TableMeta {
  1: required string dbName,
  2: required string tableName,
  3: required string tableType,
  4: optional string comments,
  5: optional string catName,
  6: optional string ownerName,
  7: optional PrincipalType ownerType
}

// ---------------------------------------------------------------------------------------------
// Functions.

enum FunctionType {
  JAVA = 1,
}

enum ResourceType {
  JAR = 1,
  FILE = 2,
  ARCHIVE = 3,
}

struct ResourceUri {
  1: ResourceType resourceType,
  2: string uri
}

struct Function {
  1: string functionName,
  2: string dbName,
  3: string className,
  4: string ownerName,
  5: PrincipalType ownerType,
  6: i32 createTime,
  7: FunctionType functionType,
  8: list<ResourceUri> resourceUris,
  9: optional string catName
}

struct GetAllFunctionsResponse {
  1: optional list<Function> functions
}

// ---------------------------------------------------------------------------------------------
// Column statistics.

struct BooleanColumnStatsData {
  1: required i64 numTrues,
  2: required i64 numFalses,
  3: required i64 numNulls,
  4: optional binary bitVectors
}

struct DoubleColumnStatsData {
  1: optional double lowValue,
  2: optional double highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram
}

struct LongColumnStatsData {
  1: optional i64 lowValue,
  2: optional i64 highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram
}

struct StringColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors
}

struct BinaryColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: optional binary bitVectors
}

// The unscaled value is big-endian two's complement. Hive 3.x+ declares scale first; the
// order of declaration changes no bytes on the wire.
struct Decimal {
  1: required binary unscaled,
  3: required i16 scale
}

struct DecimalColumnStatsData {
  1: optional Decimal lowValue,
  2: optional Decimal highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram
}

struct Date {
  1: required i64 daysSinceEpoch
}

struct DateColumnStatsData {
  1: optional Date lowValue,
  2: optional Date highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram
}

struct Timestamp {
  1: required i64 secondsSinceEpoch
}

struct TimestampColumnStatsData {
  1: optional Timestamp lowValue,
  2: optional Timestamp highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram
}

union ColumnStatisticsData {
  1: BooleanColumnStatsData booleanStats,
  2: LongColumnStatsData longStats,
  3: DoubleColumnStatsData doubleStats,
  4: StringColumnStatsData stringStats,
  5: BinaryColumnStatsData binaryStats,
  6: DecimalColumnStatsData decimalStats,
  7: DateColumnStatsData dateStats,
  8: TimestampColumnStatsData timestampStats
}

struct ColumnStatisticsObj {
  1: required string colName,
  2: required string colType,
  3: required ColumnStatisticsData statsData
}

struct ColumnStatisticsDesc {
  1: required bool isTblLevel,
  2: required string dbName,
  3: required string tableName,
  4: optional string partName,
  5: optional i64 lastAnalyzed,
  6: optional string catName
}

// A missing engine means "hive" (clients older than 4.x never send it).
struct ColumnStatistics {
  1: required ColumnStatisticsDesc statsDesc,
  2: required list<ColumnStatisticsObj> statsObj,
  3: optional bool isStatsCompliant,
  4: optional string engine = "hive"
}

struct AggrStats {
  1: required list<ColumnStatisticsObj> colStats,
  2: required i64 partsFound,
  3: optional bool isStatsCompliant
}

// engine is required in 4.0-beta and optional (default "hive") later; it may be missing.
struct SetPartitionsStatsRequest {
  1: required list<ColumnStatistics> colStats,
  2: optional bool needMerge,
  3: optional i64 writeId = -1,
  4: optional string validWriteIdList,
  5: optional string engine = "hive"
}

struct SetPartitionsStatsResponse {
  1: required bool result
}

// The Hive 2.3 Java client has catName in PartitionsStatsRequest but not here; Trino sends
// neither catName nor engine.
struct TableStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  4: optional string catName,
  5: optional string validWriteIdList,
  6: optional string engine = "hive",
  7: optional i64 id = -1
}

struct TableStatsResult {
  1: required list<ColumnStatisticsObj> tableStats,
  2: optional bool isStatsCompliant
}

struct PartitionsStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  4: required list<string> partNames,
  5: optional string catName,
  6: optional string validWriteIdList,
  7: optional string engine = "hive"
}

struct PartitionsStatsResult {
  1: required map<string, list<ColumnStatisticsObj>> partStats,
  2: optional bool isStatsCompliant
}

// ---------------------------------------------------------------------------------------------
// Locks: the HMS locks that Iceberg's Hive catalog (pyiceberg, Java Iceberg, Trino) takes around
// a commit. Locks without a transaction (txnid absent or 0) are served; colstats has no ACID
// transactions, so a request that names one is refused.

enum LockLevel {
  DB = 1,
  TABLE = 2,
  PARTITION = 3,
}

enum LockState {
  ACQUIRED = 1,
  WAITING = 2,
  ABORT = 3,
  NOT_ACQUIRED = 4,
}

enum LockType {
  SHARED_READ = 1,
  SHARED_WRITE = 2,
  EXCLUSIVE = 3,
  EXCL_WRITE = 4,
}

enum DataOperationType {
  SELECT = 1,
  INSERT = 2,
  UPDATE = 3,
  DELETE = 4,
  UNSET = 5,
  NO_TXN = 6,
}

// Field 7 is HMS 2.3's isAcid and Hive 4's isTransactional: one id, one meaning on the wire.
struct LockComponent {
  1: required LockType type,
  2: required LockLevel level,
  3: required string dbname,
  4: optional string tablename,
  5: optional string partitionname,
  6: optional DataOperationType operationType = DataOperationType.UNSET,
  7: optional bool isTransactional = false,
  8: optional bool isDynamicPartitionWrite = false
}

struct LockRequest {
  1: required list<LockComponent> component,
  2: optional i64 txnid,
  3: required string user,
  4: required string hostname,
  5: optional string agentInfo = "Unknown",
  6: optional bool zeroWaitReadEnabled = false,
  7: optional bool exclusiveCTAS = false,
  8: optional bool locklessReadsEnabled = false
}

struct LockResponse {
  1: required i64 lockid,
  2: required LockState state,
  3: optional string errorMessage
}

struct CheckLockRequest {
  1: required i64 lockid,
  2: optional i64 txnid,
  3: optional i64 elapsed_ms,
}

struct UnlockRequest {
  1: required i64 lockid,
}

struct ShowLocksRequest {
  1: optional string dbname,
  2: optional string tablename,
  3: optional string partname,
  4: optional bool isExtended = false,
  5: optional i64 txnid,
}

struct ShowLocksResponseElement {
  1: required i64 lockid,
  2: required string dbname,
  3: optional string tablename,
  4: optional string partname,
  5: required LockState state,
  6: required LockType type,
  7: optional i64 txnid,
  8: required i64 lastheartbeat,
  9: optional i64 acquiredat,
  10: required string user,
  11: required string hostname,
  12: optional i32 heartbeatCount = 0,
  13: optional string agentInfo,
  14: optional i64 blockedByExtId,
  15: optional i64 blockedByIntId,
  16: optional i64 lockIdInternal,
}

struct ShowLocksResponse {
  1: list<ShowLocksResponseElement> locks,
}

struct HeartbeatRequest {
  1: optional i64 lockid,
  2: optional i64 txnid
}

// ---------------------------------------------------------------------------------------------
// Service. ThriftHiveMetastore extends fb303.FacebookService in HMS; colstats declares fb303's
// shutdown (see below) and answers the other fb303 calls with UNKNOWN_METHOD, which the clients
// named above never make.

service ThriftHiveMetastore {
  // Databases.
  void create_database(1: Database database)
    throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)
  Database get_database(1: string name)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  void drop_database(1: string name, 2: bool deleteData, 3: bool cascade)
    throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)
  list<string> get_databases(1: string pattern) throws (1: MetaException o1)
  list<string> get_all_databases() throws (1: MetaException o1)
  void alter_database(1: string dbname, 2: Database db)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)

  // Tables.
  void create_table(1: Table tbl)
    throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3,
            4: NoSuchObjectException o4)
  void create_table_with_environment_context(1: Table tbl,
                                             2: EnvironmentContext environment_context)
    throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3,
            4: NoSuchObjectException o4)
  void drop_table(1: string dbname, 2: string name, 3: bool deleteData)
    throws (1: NoSuchObjectException o1, 2: MetaException o3)
  void drop_table_with_environment_context(1: string dbname, 2: string name,
                                           3: bool deleteData,
                                           4: EnvironmentContext environment_context)
    throws (1: NoSuchObjectException o1, 2: MetaException o3)
  list<string> get_tables(1: string db_name, 2: string pattern) throws (1: MetaException o1)
  list<string> get_tables_by_type(1: string db_name, 2: string pattern, 3: string tableType)
    throws (1: MetaException o1)
  list<TableMeta> get_table_meta(1: string db_patterns, 2: string tbl_patterns,
                                 3: list<string> tbl_types)
    throws (1: MetaException o1)
  list<string> get_all_tables(1: string db_name) throws (1: MetaException o1)
  list<string> get_table_names_by_filter(1: string dbname, 2: string filter,
                                         3: i16 max_tables = -1)
    throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)
  // get_table and get_table_objects_by_name are in HMS up to 4.0.0 and were removed in later
  // 4.x releases (HIVE-26537); older clients (Spark's Hive 2.3) still call them.
  // get_table_objects_by_name declares no exceptions since 3.x; we declare the Hive 2.3
  // client's (1: MetaException, 2: InvalidOperationException, 3: UnknownDBException) so
  // that Spark gets its declared exceptions. The success field is the same; a 3.x/4.0
  // client skips the exception fields and reports a missing result, as it would for any
  // error of that call.
  Table get_table(1: string dbname, 2: string tbl_name)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  list<Table> get_table_objects_by_name(1: string dbname, 2: list<string> tbl_names)
    throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)
  GetTableResult get_table_req(1: GetTableRequest req)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  GetTablesResult get_table_objects_by_name_req(1: GetTablesRequest req)
    throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)
  // get_schema also returns the partition keys, after the columns.
  list<FieldSchema> get_fields(1: string db_name, 2: string table_name)
    throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)
  list<FieldSchema> get_fields_with_environment_context(
      1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context)
    throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)
  list<FieldSchema> get_schema(1: string db_name, 2: string table_name)
    throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)
  list<FieldSchema> get_schema_with_environment_context(
      1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context)
    throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)
  void alter_table(1: string dbname, 2: string tbl_name, 3: Table new_tbl)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_table_with_environment_context(1: string dbname, 2: string tbl_name,
                                            3: Table new_tbl,
                                            4: EnvironmentContext environment_context)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  AlterTableResponse alter_table_req(1: AlterTableRequest req)
    throws (1: InvalidOperationException o1, 2: MetaException o2)

  // Partitions.
  Partition add_partition(1: Partition new_part)
    throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  Partition add_partition_with_environment_context(1: Partition new_part,
                                                   2: EnvironmentContext environment_context)
    throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  i32 add_partitions(1: list<Partition> new_parts)
    throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  AddPartitionsResult add_partitions_req(1: AddPartitionsRequest request)
    throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  // append_partition*: create the partition with the table's storage descriptor and a location
  // under the table's, from its values or its name ("k1=v1/k2=v2").
  Partition append_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals)
    throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  Partition append_partition_with_environment_context(1: string db_name, 2: string tbl_name,
                                                      3: list<string> part_vals,
                                                      4: EnvironmentContext environment_context)
    throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  Partition append_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name)
    throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  Partition append_partition_by_name_with_environment_context(
      1: string db_name, 2: string tbl_name, 3: string part_name,
      4: EnvironmentContext environment_context)
    throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  Partition get_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  // The user and groups of the *_with_auth calls only serve to fill Partition.privileges,
  // which colstats does not declare.
  Partition get_partition_with_auth(1: string db_name, 2: string tbl_name,
                                    3: list<string> part_vals, 4: string user_name,
                                    5: list<string> group_names)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  Partition get_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  list<Partition> get_partitions(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  // Newer 4.x IDLs add 3: InvalidObjectException o3, which colstats never raises.
  list<Partition> get_partitions_by_names(1: string db_name, 2: string tbl_name,
                                          3: list<string> names)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  // get_partition*_ps: part_vals is a prefix of the partition values; an empty string matches
  // any value.
  list<Partition> get_partitions_ps(1: string db_name, 2: string tbl_name,
                                    3: list<string> part_vals, 4: i16 max_parts = -1)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  // Note the order of the exceptions: NoSuchObject first, unlike get_partitions_ps.
  list<Partition> get_partitions_ps_with_auth(1: string db_name, 2: string tbl_name,
                                              3: list<string> part_vals, 4: i16 max_parts = -1,
                                              5: string user_name, 6: list<string> group_names)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  list<string> get_partition_names_ps(1: string db_name, 2: string tbl_name,
                                      3: list<string> part_vals, 4: i16 max_parts = -1)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  // filter is a Hive partition filter expression (e.g. `ds >= "2024-01-01" and hr = 3`).
  list<Partition> get_partitions_by_filter(1: string db_name, 2: string tbl_name,
                                           3: string filter, 4: i16 max_parts = -1)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  i32 get_num_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  // Hive 2.x declares only MetaException (as id 1); 3.x+ declares NoSuchObject first.
  list<string> get_partition_names(1: string db_name, 2: string tbl_name,
                                   3: i16 max_parts = -1)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  void alter_partition(1: string db_name, 2: string tbl_name, 3: Partition new_part)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_partitions(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_partition_with_environment_context(1: string db_name, 2: string tbl_name,
                                                3: Partition new_part,
                                                4: EnvironmentContext environment_context)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_partitions_with_environment_context(1: string db_name, 2: string tbl_name,
                                                 3: list<Partition> new_parts,
                                                 4: EnvironmentContext environment_context)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  // 3.x+; not in the Hive 2.3 client.
  AlterPartitionsResponse alter_partitions_req(1: AlterPartitionsRequest req)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  // Renames the partition part_vals to new_part's values (same partition keys).
  void rename_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals,
                        4: Partition new_part)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  bool drop_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals,
                      4: bool deleteData)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  bool drop_partition_with_environment_context(1: string db_name, 2: string tbl_name,
                                               3: list<string> part_vals, 4: bool deleteData,
                                               5: EnvironmentContext environment_context)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  bool drop_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name,
                              4: bool deleteData)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  bool drop_partition_by_name_with_environment_context(
      1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData,
      5: EnvironmentContext environment_context)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  DropPartitionsResult drop_partitions_req(1: DropPartitionsRequest req)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)

  // Column statistics.
  bool update_table_column_statistics(1: ColumnStatistics stats_obj)
    throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3,
            4: InvalidInputException o4)
  bool update_partition_column_statistics(1: ColumnStatistics stats_obj)
    throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3,
            4: InvalidInputException o4)
  ColumnStatistics get_table_column_statistics(1: string db_name, 2: string tbl_name,
                                               3: string col_name)
    throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3,
            4: InvalidObjectException o4)
  ColumnStatistics get_partition_column_statistics(1: string db_name, 2: string tbl_name,
                                                   3: string part_name, 4: string col_name)
    throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3,
            4: InvalidObjectException o4)
  // engine (argument 5 / 4) is 4.x only; a client that omits it deletes for every engine.
  bool delete_partition_column_statistics(1: string db_name, 2: string tbl_name,
                                          3: string part_name, 4: string col_name,
                                          5: string engine)
    throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3,
            4: InvalidInputException o4)
  bool delete_table_column_statistics(1: string db_name, 2: string tbl_name,
                                      3: string col_name, 4: string engine)
    throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3,
            4: InvalidInputException o4)

  // Batch and aggregate statistics calls.
  TableStatsResult get_table_statistics_req(1: TableStatsRequest request)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  PartitionsStatsResult get_partitions_statistics_req(1: PartitionsStatsRequest request)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  AggrStats get_aggr_stats_for(1: PartitionsStatsRequest request)
    throws (1: NoSuchObjectException o1, 2: MetaException o2)
  bool set_aggr_stats_for(1: SetPartitionsStatsRequest request)
    throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3,
            4: InvalidInputException o4)
  // 4.x (and post-3.1 IDLs); not in the Hive 2.3 client.
  SetPartitionsStatsResponse update_table_column_statistics_req(1: SetPartitionsStatsRequest req)
    throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3,
            4: InvalidInputException o4)
  SetPartitionsStatsResponse update_partition_column_statistics_req(
      1: SetPartitionsStatsRequest req)
    throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3,
            4: InvalidInputException o4)

  // Functions. Note drop_function's MetaException is named o3 but has id 2.
  void create_function(1: Function func)
    throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3,
            4: NoSuchObjectException o4)
  void drop_function(1: string dbName, 2: string funcName)
    throws (1: NoSuchObjectException o1, 2: MetaException o3)
  void alter_function(1: string dbName, 2: string funcName, 3: Function newFunc)
    throws (1: InvalidOperationException o1, 2: MetaException o2)
  list<string> get_functions(1: string dbName, 2: string pattern) throws (1: MetaException o1)
  Function get_function(1: string dbName, 2: string funcName)
    throws (1: MetaException o1, 2: NoSuchObjectException o2)
  GetAllFunctionsResponse get_all_functions() throws (1: MetaException o1)

  // Locks (see the structs above). unlock of an unknown lock id succeeds, as in HMS 2.3.
  LockResponse lock(1: LockRequest rqst)
    throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2)
  LockResponse check_lock(1: CheckLockRequest rqst)
    throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: NoSuchLockException o3)
  void unlock(1: UnlockRequest rqst)
    throws (1: NoSuchLockException o1, 2: TxnOpenException o2)
  ShowLocksResponse show_locks(1: ShowLocksRequest rqst)
  void heartbeat(1: HeartbeatRequest ids)
    throws (1: NoSuchLockException o1, 2: NoSuchTxnException o2, 3: TxnAbortedException o3)

  // The Hive 2.3 client sends it first on every connection; HMS 2.3 answers group_names.
  list<string> set_ugi(1: string user_name, 2: list<string> group_names)
    throws (1: MetaException o1)

  // fb303.FacebookService's shutdown, which HMS inherits: the Hive 2.3 client sends it, oneway,
  // before it drops a connection to reconnect. Declaring it here is wire-identical (same name,
  // no arguments, no reply); the server must not answer it and need not stop.
  oneway void shutdown()
}
