import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

import org.apache.hadoop.hive.metastore.Warehouse;
import org.apache.hadoop.hive.metastore.api.BinaryColumnStatsData;
import org.apache.hadoop.hive.metastore.api.BooleanColumnStatsData;
import org.apache.hadoop.hive.metastore.api.ColumnStatistics;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsData;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsDesc;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsObj;
import org.apache.hadoop.hive.metastore.api.Database;
import org.apache.hadoop.hive.metastore.api.Date;
import org.apache.hadoop.hive.metastore.api.DateColumnStatsData;
import org.apache.hadoop.hive.metastore.api.Decimal;
import org.apache.hadoop.hive.metastore.api.DecimalColumnStatsData;
import org.apache.hadoop.hive.metastore.api.DoubleColumnStatsData;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.InvalidInputException;
import org.apache.hadoop.hive.metastore.api.InvalidObjectException;
import org.apache.hadoop.hive.metastore.api.LongColumnStatsData;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.NoSuchObjectException;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.PrincipalType;
import org.apache.hadoop.hive.metastore.api.SerDeInfo;
import org.apache.hadoop.hive.metastore.api.StorageDescriptor;
import org.apache.hadoop.hive.metastore.api.StringColumnStatsData;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;

/**
 * Drives a metastore with the Thrift client generated from Hive 2.3.10's IDL, over the unframed
 * socket and binary protocol that Hive 2.3 (and so Spark) uses.
 *
 * <p>Usage: {@code HiveClientInterop PORT DATABASE run|drop}. {@code run} creates DATABASE, a
 * partitioned table with three partitions, writes and reads back statistics of every kind the
 * 2.3 client knows and exercises the error paths; it leaves the table in place so that another
 * client can read what was written. {@code drop} drops the table and the database.
 *
 * <p>Prints {@code OK <check>} or {@code FAIL <check>: <why>} per check and exits with 1 if any
 * check failed.
 */
public final class HiveClientInterop {
  static final String TABLE = "interop_stats";

  /** Data columns and their Hive types; one column per kind of statistics, some kinds twice. */
  static final Map<String, String> COLUMNS = new LinkedHashMap<>();

  static {
    COLUMNS.put("c_boolean", "boolean");
    COLUMNS.put("c_tinyint", "tinyint");
    COLUMNS.put("c_int", "int");
    COLUMNS.put("c_bigint", "bigint");
    COLUMNS.put("c_float", "float");
    COLUMNS.put("c_double", "double");
    COLUMNS.put("c_decimal", "decimal(38,10)");
    COLUMNS.put("c_string", "string");
    COLUMNS.put("c_varchar", "varchar(10)");
    COLUMNS.put("c_binary", "binary");
    COLUMNS.put("c_date", "date");
  }

  static final List<FieldSchema> PARTITION_KEYS =
      Arrays.asList(new FieldSchema("ds", "string", null), new FieldSchema("hr", "int", null));

  /** Partition values; the last needs escaping ('/', ':', '=', '%') and keeps ' ' and 'é'. */
  static final List<List<String>> PARTITIONS =
      Arrays.asList(
          Arrays.asList("2024-01-01", "0"),
          Arrays.asList("2024-01-01", "23"),
          Arrays.asList("2024/01:02=x %\u00e9", "7"));

  /** Hive 2.x writes NDV sketches as FM text in the string-typed bitVectors field. */
  static final String TABLE_BIT_VECTORS = "{0, 1, 2}{0, 3}";

  static final String PARTITION_BIT_VECTORS = "{0}{1, 30}";

  private final ThriftHiveMetastore.Client client;
  private final String db;
  private final PrintStream out =
      new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
  private final long started = System.currentTimeMillis() / 1000;
  private int failures;

  private HiveClientInterop(ThriftHiveMetastore.Client client, String db) {
    this.client = client;
    this.db = db;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 3 || !Arrays.asList("run", "drop").contains(args[2])) {
      System.err.println("usage: HiveClientInterop PORT DATABASE run|drop");
      System.exit(2);
    }
    TSocket socket = new TSocket("127.0.0.1", Integer.parseInt(args[0]), 30_000);
    socket.open();
    HiveClientInterop interop =
        new HiveClientInterop(
            new ThriftHiveMetastore.Client(new TBinaryProtocol(socket)), args[1]);
    try {
      if (args[2].equals("run")) {
        interop.run();
      } else {
        interop.drop();
      }
    } finally {
      socket.close();
    }
    interop.out.println(interop.failures == 0 ? "all checks passed" : interop.failures + " failed");
    System.exit(interop.failures == 0 ? 0 : 1);
  }

  // -- the checks -------------------------------------------------------------------------------

  private void run() throws Exception {
    List<String> partNames = new ArrayList<>();
    for (List<String> values : PARTITIONS) {
      partNames.add(Warehouse.makePartName(PARTITION_KEYS, values));
    }
    createObjects(partNames);
    writeStatistics(partNames);
    readStatistics(partNames);
    errorPaths(partNames);
    deletes(partNames);
  }

  private void createObjects(List<String> partNames) {
    check(
        "create_database",
        () -> {
          Database database = new Database(db, "interop", "file:/tmp/" + db, new HashMap<>());
          database.setOwnerName("hive");
          database.setOwnerType(PrincipalType.USER);
          client.create_database(database);
          expect("name", db, client.get_database(db).getName());
        });
    check(
        "create_table",
        () -> {
          client.create_table(table());
          Table got = client.get_table(db, TABLE);
          expect("columns", columns(), got.getSd().getCols());
          expect("partition keys", PARTITION_KEYS, got.getPartitionKeys());
          expect("table type", "MANAGED_TABLE", got.getTableType());
        });
    check(
        "add_partition",
        () -> {
          Partition added = client.add_partition(partition(PARTITIONS.get(0)));
          expect("values", PARTITIONS.get(0), added.getValues());
        });
    check(
        "add_partitions",
        () -> {
          List<Partition> rest = new ArrayList<>();
          for (List<String> values : PARTITIONS.subList(1, PARTITIONS.size())) {
            rest.add(partition(values));
          }
          expect("count", rest.size(), client.add_partitions(rest));
        });
    check(
        "get_partition_names",
        () ->
            expect(
                "names (escaped as by Hive's Warehouse.makePartName)",
                new TreeSet<>(partNames),
                new TreeSet<>(client.get_partition_names(db, TABLE, (short) -1))));
    check(
        "get_partitions_by_names",
        () -> {
          List<String> asked = new ArrayList<>(partNames);
          asked.add("ds=absent/hr=0");
          TreeSet<String> got = new TreeSet<>();
          for (Partition p : client.get_partitions_by_names(db, TABLE, asked)) {
            expect("table", TABLE, p.getTableName());
            got.add(p.getValues().toString());
          }
          TreeSet<String> want = new TreeSet<>();
          PARTITIONS.forEach(values -> want.add(values.toString()));
          expect("partition values", want, got);
        });
  }

  private void writeStatistics(List<String> partNames) {
    check(
        "update_table_column_statistics",
        () ->
            expect(
                "result",
                true,
                client.update_table_column_statistics(
                    new ColumnStatistics(
                        new ColumnStatisticsDesc(true, db, TABLE), statistics(0)))));
    for (int i = 0; i < partNames.size(); i++) {
      int variant = i + 1;
      ColumnStatisticsDesc desc = new ColumnStatisticsDesc(false, db, TABLE);
      desc.setPartName(partNames.get(i));
      check(
          "update_partition_column_statistics [" + i + "]",
          () ->
              expect(
                  "result",
                  true,
                  client.update_partition_column_statistics(
                      new ColumnStatistics(desc, statistics(variant)))));
    }
  }

  private void readStatistics(List<String> partNames) {
    for (ColumnStatisticsObj want : statistics(0)) {
      String column = want.getColName();
      check(
          "get_table_column_statistics " + column,
          () -> {
            ColumnStatistics got = client.get_table_column_statistics(db, TABLE, column);
            expectDesc(got.getStatsDesc(), true, null);
            expect("statsObj", List.of(want), got.getStatsObj());
          });
    }
    for (int i = 0; i < partNames.size(); i++) {
      String partName = partNames.get(i);
      for (ColumnStatisticsObj want : statistics(i + 1)) {
        String column = want.getColName();
        check(
            "get_partition_column_statistics [" + i + "] " + column,
            () -> {
              ColumnStatistics got =
                  client.get_partition_column_statistics(db, TABLE, partName, column);
              expectDesc(got.getStatsDesc(), false, partName);
              expect("statsObj", List.of(want), got.getStatsObj());
            });
      }
    }
    check(
        "names are case-insensitive",
        () ->
            expect(
                "statsObj",
                client.get_table_column_statistics(db, TABLE, "c_bigint").getStatsObj(),
                client
                    .get_table_column_statistics(
                        db.toUpperCase(), TABLE.toUpperCase(), "C_BIGINT")
                    .getStatsObj()));
  }

  private void errorPaths(List<String> partNames) {
    ColumnStatisticsObj unknownColumn =
        obj("no_such_column", "bigint", ColumnStatisticsData.longStats(longStats(0, 1, 0, 1)));
    expectError(
        "update_table_column_statistics unknown column",
        InvalidObjectException.class,
        () ->
            client.update_table_column_statistics(
                new ColumnStatistics(
                    new ColumnStatisticsDesc(true, db, TABLE), List.of(unknownColumn))));
    expectError(
        "update_partition_column_statistics unknown column",
        InvalidObjectException.class,
        () -> {
          ColumnStatisticsDesc desc = new ColumnStatisticsDesc(false, db, TABLE);
          desc.setPartName(partNames.get(0));
          client.update_partition_column_statistics(
              new ColumnStatistics(desc, List.of(unknownColumn)));
        });
    expectError(
        "update_table_column_statistics wrong kind",
        InvalidInputException.class,
        () ->
            client.update_table_column_statistics(
                new ColumnStatistics(
                    new ColumnStatisticsDesc(true, db, TABLE),
                    List.of(
                        obj(
                            "c_string",
                            "string",
                            ColumnStatisticsData.longStats(longStats(0, 1, 0, 1)))))));
    expectError(
        "update_table_column_statistics unknown table",
        NoSuchObjectException.class,
        () ->
            client.update_table_column_statistics(
                new ColumnStatistics(
                    new ColumnStatisticsDesc(true, db, "no_such_table"), statistics(0))));
    expectError(
        "get_table_column_statistics unknown table",
        NoSuchObjectException.class,
        () -> client.get_table_column_statistics(db, "no_such_table", "c_int"));
    expectError(
        "get_partition_column_statistics unknown partition",
        NoSuchObjectException.class,
        () -> client.get_partition_column_statistics(db, TABLE, "ds=absent/hr=0", "c_int"));
    expectError(
        "get_table unknown table",
        NoSuchObjectException.class,
        () -> client.get_table(db, "no_such_table"));
    // Hive 2.x declares only MetaException (id 1) here; 3.x+ puts NoSuchObjectException at id 1,
    // which this client decodes as a MetaException.
    expectError(
        "get_partition_names unknown table",
        MetaException.class,
        () -> client.get_partition_names(db, "no_such_table", (short) -1));
  }

  private void deletes(List<String> partNames) {
    check(
        "delete_table_column_statistics",
        () -> expect("result", true, client.delete_table_column_statistics(db, TABLE, "c_string")));
    expectError(
        "get_table_column_statistics after delete",
        NoSuchObjectException.class,
        () -> client.get_table_column_statistics(db, TABLE, "c_string"));
    expectError(
        "delete_table_column_statistics again",
        NoSuchObjectException.class,
        () -> client.delete_table_column_statistics(db, TABLE, "c_string"));
    check(
        "other columns keep their statistics",
        () ->
            expect(
                "columns",
                1,
                client.get_table_column_statistics(db, TABLE, "c_varchar").getStatsObjSize()));
    String partName = partNames.get(PARTITIONS.size() - 1);
    check(
        "delete_partition_column_statistics",
        () ->
            expect(
                "result",
                true,
                client.delete_partition_column_statistics(db, TABLE, partName, "c_date")));
    expectError(
        "get_partition_column_statistics after delete",
        NoSuchObjectException.class,
        () -> client.get_partition_column_statistics(db, TABLE, partName, "c_date"));
  }

  private void drop() {
    check("drop_table", () -> client.drop_table(db, TABLE, true));
    expectError(
        "get_table after drop", NoSuchObjectException.class, () -> client.get_table(db, TABLE));
    expectError(
        "get_table_column_statistics after drop",
        NoSuchObjectException.class,
        () -> client.get_table_column_statistics(db, TABLE, "c_int"));
    check("drop_database", () -> client.drop_database(db, true, true));
  }

  // -- what is written --------------------------------------------------------------------------

  private Table table() {
    StorageDescriptor sd = new StorageDescriptor();
    sd.setCols(columns());
    sd.setLocation("file:/tmp/" + db + "/" + TABLE);
    sd.setInputFormat("org.apache.hadoop.mapred.TextInputFormat");
    sd.setOutputFormat("org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat");
    sd.setNumBuckets(-1);
    sd.setSerdeInfo(
        new SerDeInfo(null, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", new HashMap<>()));
    sd.setBucketCols(new ArrayList<>());
    sd.setSortCols(new ArrayList<>());
    sd.setParameters(new HashMap<>());
    int now = (int) started;
    return new Table(
        TABLE, db, "hive", now, 0, 0, sd, PARTITION_KEYS, new HashMap<>(), null, null,
        "MANAGED_TABLE");
  }

  /** A partition as Hive's client builds it: a copy of the table's storage, its own location. */
  private Partition partition(List<String> values) throws MetaException {
    StorageDescriptor sd = table().getSd();
    sd.setLocation(sd.getLocation() + "/" + Warehouse.makePartName(PARTITION_KEYS, values));
    return new Partition(values, db, TABLE, (int) started, 0, sd, new HashMap<>());
  }

  private static List<FieldSchema> columns() {
    List<FieldSchema> columns = new ArrayList<>();
    COLUMNS.forEach((name, type) -> columns.add(new FieldSchema(name, type, null)));
    return columns;
  }

  /**
   * The statistics of every column: variant 0 at table level, 1 to 3 for the partitions. Table
   * level holds the extremes of each type; the decimals keep trailing zeros and a negative sign.
   */
  static List<ColumnStatisticsObj> statistics(int v) {
    boolean tbl = v == 0;
    List<ColumnStatisticsObj> objs = new ArrayList<>();
    objs.add(
        obj(
            "c_boolean",
            ColumnStatisticsData.booleanStats(new BooleanColumnStatsData(3 + v, 5 * v, v))));
    objs.add(obj("c_tinyint", ColumnStatisticsData.longStats(longStats(-128 + v, 127, v, 256))));
    LongColumnStatsData ints =
        tbl
            ? longStats(Integer.MIN_VALUE, Integer.MAX_VALUE, 2, 1000)
            : longStats(-1000L * v, 1000L * v, 2, 1000 + v);
    if (tbl) {
      ints.setBitVectors(TABLE_BIT_VECTORS);
    }
    objs.add(obj("c_int", ColumnStatisticsData.longStats(ints)));
    objs.add(
        obj(
            "c_bigint",
            ColumnStatisticsData.longStats(
                longStats(Long.MIN_VALUE + v, Long.MAX_VALUE - v, 0, 12_345_678_901L + v))));
    DoubleColumnStatsData floats = new DoubleColumnStatsData(4 + v, 17);
    floats.setLowValue(tbl ? -Float.MAX_VALUE : -1.1f * v);
    floats.setHighValue(1.1f * (v + 1));
    objs.add(obj("c_float", ColumnStatisticsData.doubleStats(floats)));
    DoubleColumnStatsData doubles = new DoubleColumnStatsData(v, 3 + v);
    doubles.setLowValue(tbl ? -Double.MAX_VALUE : -1.5 * v);
    doubles.setHighValue(tbl ? Double.MIN_VALUE : 0.1 * v);
    objs.add(obj("c_double", ColumnStatisticsData.doubleStats(doubles)));
    DecimalColumnStatsData decimals = new DecimalColumnStatsData(v, 42 + v);
    decimals.setLowValue(
        decimal(
            tbl
                ? new BigDecimal("-1234567890.0123456789")
                : new BigDecimal("-10.50").subtract(BigDecimal.valueOf(v))));
    decimals.setHighValue(
        decimal(
            tbl
                ? new BigDecimal("9999999999999999999999999999.9999999999")
                : new BigDecimal("0.00").add(BigDecimal.valueOf(v - 1))));
    objs.add(obj("c_decimal", ColumnStatisticsData.decimalStats(decimals)));
    StringColumnStatsData strings = new StringColumnStatsData(100 + v, 12.5 + v / 4.0, 7 + v, 9);
    if (v == 2) {
      strings.setBitVectors(PARTITION_BIT_VECTORS);
    }
    objs.add(obj("c_string", ColumnStatisticsData.stringStats(strings)));
    objs.add(
        obj(
            "c_varchar",
            ColumnStatisticsData.stringStats(new StringColumnStatsData(10, 10.0 / 3, v, 3 + v))));
    objs.add(
        obj(
            "c_binary",
            ColumnStatisticsData.binaryStats(
                new BinaryColumnStatsData(1_048_576 + v, 2048.25 + v, 1 + v))));
    DateColumnStatsData dates = new DateColumnStatsData(0, 5 + v);
    dates.setLowValue(new Date(tbl ? -719_162 : 19_723 + v)); // 0001-01-01 / 2024-01-0x
    dates.setHighValue(new Date(tbl ? 2_932_896 : 19_723 + 10 * v)); // 9999-12-31
    objs.add(obj("c_date", ColumnStatisticsData.dateStats(dates)));
    return objs;
  }

  private static ColumnStatisticsObj obj(String column, ColumnStatisticsData data) {
    return obj(column, COLUMNS.get(column), data);
  }

  private static ColumnStatisticsObj obj(String column, String type, ColumnStatisticsData data) {
    return new ColumnStatisticsObj(column, type, data);
  }

  private static LongColumnStatsData longStats(long low, long high, long nulls, long ndv) {
    LongColumnStatsData stats = new LongColumnStatsData(nulls, ndv);
    stats.setLowValue(low);
    stats.setHighValue(high);
    return stats;
  }

  /** A Thrift Decimal as Hive builds it: minimal two's complement unscaled value and scale. */
  private static Decimal decimal(BigDecimal value) {
    return new Decimal(
        ByteBuffer.wrap(value.unscaledValue().toByteArray()), (short) value.scale());
  }

  // -- checking ---------------------------------------------------------------------------------

  @FunctionalInterface
  private interface Body {
    void run() throws Exception;
  }

  /** A difference between what a check expected and what the server answered. */
  private static final class Mismatch extends Exception {
    Mismatch(String message) {
      super(message);
    }
  }

  private void check(String name, Body body) {
    try {
      body.run();
      out.println("OK " + name);
    } catch (Mismatch e) {
      fail(name, e.getMessage());
    } catch (Exception e) {
      fail(name, "unexpected " + describe(e));
    }
  }

  /** Checks that BODY throws TYPE, the exception the Hive 2.3 IDL declares for the case. */
  private void expectError(String name, Class<? extends Exception> type, Body body) {
    try {
      body.run();
      fail(name, "no exception, expected " + type.getSimpleName());
    } catch (Exception e) {
      if (type.isInstance(e)) {
        out.println("OK " + name + " -> " + type.getSimpleName());
      } else {
        fail(name, "expected " + type.getSimpleName() + ", got " + describe(e));
      }
    }
  }

  private void fail(String name, String why) {
    failures++;
    out.println("FAIL " + name + ": " + why);
  }

  private static String describe(Exception e) {
    String type = e.getClass().getSimpleName();
    if (e instanceof TApplicationException) {
      type += " type " + ((TApplicationException) e).getType();
    }
    return type + ": " + e.getMessage();
  }

  private static void expect(String what, Object want, Object got) throws Mismatch {
    if (!Objects.equals(want, got)) {
      throw new Mismatch(what + ": expected " + want + ", got " + got);
    }
  }

  private void expectDesc(ColumnStatisticsDesc desc, boolean tableLevel, String partName)
      throws Mismatch {
    expect("isTblLevel", tableLevel, desc.isIsTblLevel());
    expect("dbName", db, desc.getDbName());
    expect("tableName", TABLE, desc.getTableName());
    expect("partName", partName, desc.getPartName());
    // 2.3.10's client already has catName (field 6); the server fills in the default catalog.
    expect("catName", "hive", desc.getCatName());
    long now = System.currentTimeMillis() / 1000;
    if (!desc.isSetLastAnalyzed()
        || desc.getLastAnalyzed() < started
        || desc.getLastAnalyzed() > now) {
      throw new Mismatch(
          "lastAnalyzed: expected the server's time, in ["
              + started
              + ", "
              + now
              + "], got "
              + (desc.isSetLastAnalyzed() ? desc.getLastAnalyzed() : "nothing"));
    }
  }
}
