"""The Spark workload: a data engineer's day on one database, as named SQL steps in sections.

`{wh}` in a statement stands for the warehouse directory of the run (spark.sql.warehouse.dir);
spark_workload.py fills it in. Statements run in this order, each on the state the previous
ones left, and every step records its rows or its error, so a metastore that gets one step
wrong shows it in that step and, often, in later ones.

Tables (database `sales`):
- events: datasource, `USING parquet PARTITIONED BY (ds string, hr int)`;
- orders_orc: Hive serde, `STORED AS ORC PARTITIONED BY (ds string, region string)`;
- logs_txt (renamed to logs): Hive serde, `STORED AS TEXTFILE PARTITIONED BY (dt date, hr int)`;
- plain (datasource), plain_hive (text): unpartitioned; ext_t, ext_ds, ext_part: external.

A pruning step (`Step.scans`) also lists the partition folders its scan read (from the
executed plan), which shows which partitions Spark kept.
"""

from __future__ import annotations

import dataclasses

UPPER = "org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper"
LOWER = "org.apache.hadoop.hive.ql.udf.generic.GenericUDFLower"


@dataclasses.dataclass(frozen=True)
class Step:
    section: str
    name: str
    sql: str
    # A pruning step also records the partition folders its table scans read.
    scans: bool = False


SECTIONS = (
    "databases",
    "tables",
    "inserts",
    "pruning",
    "partitions",
    "alter",
    "ctas",
    "views",
    "functions",
    "analyze",
    "errors",
    "drops",
)


def _steps(section: str, *pairs: tuple[str, str]) -> list[Step]:
    return [Step(section, name, sql) for name, sql in pairs]


DATABASES = _steps(
    "databases",
    (
        "create database with comment, location, properties",
        "CREATE DATABASE sales COMMENT 'Sales data' LOCATION '{wh}/sales.db' "
        "WITH DBPROPERTIES ('owner.team'='data-eng', 'purpose'='demo')",
    ),
    (
        "set dbproperties",
        "ALTER DATABASE sales SET DBPROPERTIES ('purpose'='research', 'new.key'='v')",
    ),
    ("describe database extended", "DESCRIBE DATABASE EXTENDED sales"),
    ("describe database", "DESCRIBE DATABASE sales"),
    ("show databases", "SHOW DATABASES"),
    ("show databases like", "SHOW DATABASES LIKE 'sal*'"),
    ("create database if not exists (exists)", "CREATE DATABASE IF NOT EXISTS sales"),
    ("create database without location", "CREATE DATABASE scratch"),
    ("describe database without location", "DESCRIBE DATABASE EXTENDED scratch"),
    ("use", "USE sales"),
    ("unset dbproperties", "ALTER DATABASE sales UNSET DBPROPERTIES ('new.key')"),
    ("describe database after unset", "DESCRIBE DATABASE EXTENDED sales"),
)

TABLES = _steps(
    "tables",
    (
        "create datasource partitioned",
        "CREATE TABLE sales.events (id bigint, name string, amount double) "
        "USING parquet PARTITIONED BY (ds string, hr int)",
    ),
    (
        "create hive orc partitioned",
        "CREATE TABLE sales.orders_orc (order_id int, customer string COMMENT 'who', "
        "total decimal(10,2)) COMMENT 'orders table' PARTITIONED BY (ds string, region string) "
        "STORED AS ORC TBLPROPERTIES ('orc.compress'='SNAPPY')",
    ),
    (
        "create hive text partitioned by date",
        "CREATE TABLE sales.logs_txt (line string, level string) PARTITIONED BY (dt date, hr int) "
        "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE",
    ),
    ("create datasource", "CREATE TABLE sales.plain (id int, name string) USING parquet"),
    ("create hive text", "CREATE TABLE sales.plain_hive (id int, name string) STORED AS TEXTFILE"),
    (
        "create external hive parquet",
        "CREATE EXTERNAL TABLE sales.ext_t (id int, name string) STORED AS PARQUET "
        "LOCATION '{wh}/external/ext_t'",
    ),
    (
        "create external datasource",
        "CREATE TABLE sales.ext_ds (id int) USING parquet LOCATION '{wh}/external/ext_ds'",
    ),
    ("show tables", "SHOW TABLES IN sales"),
    ("show tables like", "SHOW TABLES IN sales LIKE 'p*'"),
    ("show table extended", "SHOW TABLE EXTENDED IN sales LIKE 'plain'"),
    ("describe datasource", "DESCRIBE TABLE EXTENDED sales.events"),
    ("describe orc", "DESCRIBE TABLE FORMATTED sales.orders_orc"),
    ("describe text", "DESCRIBE TABLE EXTENDED sales.logs_txt"),
    ("describe external", "DESCRIBE TABLE EXTENDED sales.ext_t"),
    ("describe external datasource", "DESCRIBE TABLE EXTENDED sales.ext_ds"),
    ("show create table datasource", "SHOW CREATE TABLE sales.events"),
    ("show create table hive", "SHOW CREATE TABLE sales.logs_txt AS SERDE"),
    ("show tblproperties", "SHOW TBLPROPERTIES sales.orders_orc"),
)

INSERTS = _steps(
    "inserts",
    (
        "datasource static",
        "INSERT INTO sales.events PARTITION (ds='2024-01-01', hr=1) "
        "VALUES (1, 'a', 1.5), (2, 'b', 2.5)",
    ),
    (
        "datasource static second",
        "INSERT INTO sales.events PARTITION (ds='2024-01-01', hr=2) VALUES (3, 'c', 3.5)",
    ),
    (
        "datasource overwrite static",
        "INSERT OVERWRITE sales.events PARTITION (ds='2024-01-01', hr=2) VALUES (4, 'd', 4.5)",
    ),
    (
        "datasource dynamic",
        "INSERT INTO sales.events PARTITION (ds, hr) VALUES "
        "(5, 'e', 5.0, '2024-01-02', 1), (6, 'f', 6.0, '2024-01-02', 3), "
        "(7, 'g', 7.0, '2024-01-03', 1), (8, 'h', 8.0, '2024-01-03', 12), "
        "(9, 'i', 9.0, '2023-12-31', 23)",
    ),
    (
        "datasource partly dynamic",
        "INSERT INTO sales.events PARTITION (ds='2024-01-04', hr) "
        "VALUES (10, 'j', 10.0, 5), (11, 'k', 11.0, 7)",
    ),
    (
        "datasource append to existing partition",
        "INSERT INTO sales.events PARTITION (ds='2024-01-01', hr=1) VALUES (12, 'l', 12.5)",
    ),
    ("set dynamic overwrite", "SET spark.sql.sources.partitionOverwriteMode=dynamic"),
    (
        "datasource dynamic overwrite",
        "INSERT OVERWRITE sales.events PARTITION (ds, hr) SELECT 13, 'm', 13.0, '2024-01-03', 12",
    ),
    ("set static overwrite", "SET spark.sql.sources.partitionOverwriteMode=static"),
    ("select datasource", "SELECT * FROM sales.events"),
    ("count datasource", "SELECT count(*) FROM sales.events"),
    (
        "orc static",
        "INSERT INTO sales.orders_orc PARTITION (ds='2024-01-01', region='eu') "
        "VALUES (1, 'x', 10.00)",
    ),
    (
        "orc dynamic",
        "INSERT INTO sales.orders_orc PARTITION (ds, region) VALUES "
        "(2, 'y', 20.5, '2024-01-01', 'us'), (3, 'z', 30.25, '2024-01-02', 'eu'), "
        "(4, 'w', 1.0, '2024-01-03', 'apac')",
    ),
    (
        "orc overwrite partly dynamic",
        "INSERT OVERWRITE TABLE sales.orders_orc PARTITION (ds='2024-01-02', region) "
        "SELECT 5, 'v', 50.0, 'eu'",
    ),
    ("select orc", "SELECT * FROM sales.orders_orc"),
    (
        "text dynamic with date keys",
        "INSERT INTO sales.logs_txt PARTITION (dt, hr) VALUES "
        "('l1', 'INFO', DATE'2024-01-01', 1), ('l2', 'WARN', DATE'2024-01-15', 2), "
        "('l3', 'ERROR', DATE'2024-02-01', 3)",
    ),
    (
        "text static",
        "INSERT INTO sales.logs_txt PARTITION (dt='2024-01-15', hr=4) VALUES ('l4', 'INFO')",
    ),
    (
        "text overwrite static",
        "INSERT OVERWRITE TABLE sales.logs_txt PARTITION (dt='2024-01-01', hr=1) "
        "VALUES ('l5', 'DEBUG')",
    ),
    ("select text", "SELECT * FROM sales.logs_txt"),
    ("datasource unpartitioned", "INSERT INTO sales.plain VALUES (1, 'a'), (2, 'b')"),
    ("datasource unpartitioned append", "INSERT INTO sales.plain VALUES (3, 'c')"),
    ("hive text unpartitioned", "INSERT INTO sales.plain_hive VALUES (1, 'a'), (2, 'b')"),
    ("hive text overwrite", "INSERT OVERWRITE TABLE sales.plain_hive SELECT 3, 'c'"),
    ("external hive parquet", "INSERT INTO sales.ext_t VALUES (1, 'x')"),
    ("external datasource", "INSERT INTO sales.ext_ds VALUES (7)"),
    ("select plain", "SELECT * FROM sales.plain"),
    ("select plain_hive", "SELECT * FROM sales.plain_hive"),
    ("select ext_t", "SELECT * FROM sales.ext_t"),
    ("select ext_ds", "SELECT * FROM sales.ext_ds"),
)

ELEVEN_DATES = ", ".join(f"'2024-01-{d:02d}'" for d in range(1, 12))
ELEVEN_DAYS = ", ".join(f"DATE'2024-01-{d:02d}'" for d in range(11, 22))

# (name, table, columns, predicate): rows of the SELECT and the partitions it read.
PRUNING_QUERIES = (
    ("string =", "events", "id, ds, hr", "ds = '2024-01-01'"),
    ("string <", "events", "id, ds, hr", "ds < '2024-01-02'"),
    ("string <=", "events", "id, ds, hr", "ds <= '2024-01-02'"),
    ("string >", "events", "id, ds, hr", "ds > '2024-01-02'"),
    ("string >=", "events", "id, ds, hr", "ds >= '2024-01-03'"),
    ("string !=", "events", "id, ds, hr", "ds != '2024-01-01'"),
    ("string <>", "events", "id, ds, hr", "ds <> '2024-01-03'"),
    ("int =", "events", "id, ds, hr", "hr = 1"),
    ("int <", "events", "id, ds, hr", "hr < 3"),
    ("int <=", "events", "id, ds, hr", "hr <= 3"),
    ("int >", "events", "id, ds, hr", "hr > 5"),
    ("int >=", "events", "id, ds, hr", "hr >= 12"),
    ("int !=", "events", "id, ds, hr", "hr != 1"),
    ("int = string literal", "events", "id, ds, hr", "hr = '2'"),
    ("literal first string", "events", "id, ds, hr", "'2024-01-02' < ds"),
    ("literal first int", "events", "id, ds, hr", "2 > hr"),
    ("string in small", "events", "id, ds, hr", "ds IN ('2024-01-01', '2024-01-04')"),
    ("int in small", "events", "id, ds, hr", "hr IN (1, 12)"),
    ("int in large", "events", "id, ds, hr", "hr IN (0, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13)"),
    ("string in large", "events", "id, ds, hr", f"ds IN ({ELEVEN_DATES})"),
    ("string not in", "events", "id, ds, hr", "ds NOT IN ('2024-01-01', '2024-01-02')"),
    ("int not in", "events", "id, ds, hr", "hr NOT IN (1, 2)"),
    ("like prefix", "events", "id, ds, hr", "ds LIKE '2023-12%'"),
    ("like suffix", "events", "id, ds, hr", "ds LIKE '%-02'"),
    ("like contains", "events", "id, ds, hr", "ds LIKE '%01-0%'"),
    ("startswith", "events", "id, ds, hr", "startswith(ds, '2024-01-0')"),
    ("like without wildcard", "events", "id, ds, hr", "ds LIKE '2024-01-04'"),
    ("between", "events", "id, ds, hr", "ds BETWEEN '2024-01-01' AND '2024-01-02'"),
    ("and", "events", "id, ds, hr", "ds = '2024-01-01' AND hr = 1"),
    ("or", "events", "id, ds, hr", "ds = '2024-01-01' OR hr = 3"),
    (
        "or of ands",
        "events",
        "id, ds, hr",
        "(ds = '2024-01-01' AND hr = 1) OR (ds = '2024-01-02' AND hr = 3)",
    ),
    ("not of or", "events", "id, ds, hr", "NOT (ds = '2024-01-01' OR hr = 1)"),
    (
        "range and in",
        "events",
        "id, ds, hr",
        "ds > '2024-01-01' AND ds < '2024-01-04' AND hr IN (1, 3)",
    ),
    ("partition and data column", "events", "id, ds, hr", "ds = '2024-01-02' AND id > 5"),
    ("not pushed expression", "events", "id, ds, hr", "hr + 1 = 2"),
    (
        "orc two string keys",
        "orders_orc",
        "order_id, ds, region",
        "ds = '2024-01-01' AND region = 'eu'",
    ),
    ("orc string in", "orders_orc", "order_id, ds, region", "region IN ('us', 'apac')"),
    ("orc like", "orders_orc", "order_id, ds, region", "region LIKE 'a%'"),
    ("date =", "logs_txt", "line, dt, hr", "dt = DATE'2024-01-15'"),
    ("date = string", "logs_txt", "line, dt, hr", "dt = '2024-01-15'"),
    ("date <", "logs_txt", "line, dt, hr", "dt < DATE'2024-02-01'"),
    ("date >=", "logs_txt", "line, dt, hr", "dt >= DATE'2024-01-15'"),
    ("date !=", "logs_txt", "line, dt, hr", "dt != DATE'2024-01-15'"),
    ("date in small", "logs_txt", "line, dt, hr", "dt IN (DATE'2024-01-01', DATE'2024-02-01')"),
    ("date in large", "logs_txt", "line, dt, hr", f"dt IN ({ELEVEN_DAYS})"),
    (
        "date between",
        "logs_txt",
        "line, dt, hr",
        "dt BETWEEN DATE'2024-01-02' AND DATE'2024-01-31'",
    ),
    ("date and int", "logs_txt", "line, dt, hr", "dt > DATE'2024-01-01' AND hr < 3"),
)

PRUNING = [
    Step(
        "pruning",
        name,
        f"SELECT {columns} FROM sales.{table} WHERE {predicate}",
        scans=True,
    )
    for name, table, columns, predicate in PRUNING_QUERIES
]

PARTITIONS = _steps(
    "partitions",
    ("show partitions", "SHOW PARTITIONS sales.events"),
    ("show partitions prefix spec", "SHOW PARTITIONS sales.events PARTITION (ds='2024-01-01')"),
    ("show partitions non-prefix spec", "SHOW PARTITIONS sales.events PARTITION (hr=1)"),
    ("show partitions full spec", "SHOW PARTITIONS sales.events PARTITION (ds='2024-01-01', hr=2)"),
    ("show partitions no match", "SHOW PARTITIONS sales.events PARTITION (ds='nope')"),
    ("show partitions orc", "SHOW PARTITIONS sales.orders_orc"),
    ("show partitions date spec", "SHOW PARTITIONS sales.logs_txt PARTITION (dt='2024-01-15')"),
    ("add partition", "ALTER TABLE sales.events ADD PARTITION (ds='2024-03-01', hr=0)"),
    (
        "add if not exists with location",
        "ALTER TABLE sales.events ADD IF NOT EXISTS PARTITION (ds='2024-03-01', hr=0) "
        "PARTITION (ds='2024-03-02', hr=0) LOCATION '{wh}/custom/events_0302'",
    ),
    (
        "describe added partition",
        "DESCRIBE TABLE EXTENDED sales.events PARTITION (ds='2024-03-02', hr=0)",
    ),
    (
        "add partition orc",
        "ALTER TABLE sales.orders_orc ADD PARTITION (ds='2024-03-01', region='us')",
    ),
    ("add partition text", "ALTER TABLE sales.logs_txt ADD PARTITION (dt='2024-03-01', hr=0)"),
    (
        "describe partition with data",
        "DESCRIBE TABLE EXTENDED sales.events PARTITION (ds='2024-01-02', hr=3)",
    ),
    (
        "describe text partition",
        "DESCRIBE TABLE EXTENDED sales.logs_txt PARTITION (dt='2024-01-15', hr=2)",
    ),
    (
        "rename partition with data",
        "ALTER TABLE sales.events PARTITION (ds='2024-01-04', hr=7) "
        "RENAME TO PARTITION (ds='2024-01-05', hr=7)",
    ),
    ("select renamed partition", "SELECT id, ds, hr FROM sales.events WHERE ds >= '2024-01-04'"),
    (
        "describe renamed partition",
        "DESCRIBE TABLE EXTENDED sales.events PARTITION (ds='2024-01-05', hr=7)",
    ),
    (
        "rename empty orc partition",
        "ALTER TABLE sales.orders_orc PARTITION (ds='2024-03-01', region='us') "
        "RENAME TO PARTITION (ds='2024-03-05', region='us')",
    ),
    (
        "set partition location",
        "ALTER TABLE sales.events PARTITION (ds='2024-03-01', hr=0) "
        "SET LOCATION '{wh}/custom/events_moved'",
    ),
    (
        "describe moved partition",
        "DESCRIBE TABLE EXTENDED sales.events PARTITION (ds='2024-03-01', hr=0)",
    ),
    (
        "set partition serdeproperties",
        "ALTER TABLE sales.logs_txt PARTITION (dt='2024-01-15', hr=2) "
        "SET SERDEPROPERTIES ('field.delim'=';')",
    ),
    (
        "select partition read with its serde",
        "SELECT * FROM sales.logs_txt WHERE dt = DATE'2024-01-15'",
    ),
    ("drop partition", "ALTER TABLE sales.events DROP PARTITION (ds='2024-03-02', hr=0)"),
    (
        "drop partition if exists missing",
        "ALTER TABLE sales.events DROP IF EXISTS PARTITION (ds='2024-09-09', hr=0)",
    ),
    ("drop partition partial spec", "ALTER TABLE sales.events DROP PARTITION (ds='2024-03-01')"),
    (
        "drop two partitions",
        "ALTER TABLE sales.orders_orc DROP PARTITION (ds='2024-03-05', region='us'), "
        "PARTITION (ds='2024-01-03')",
    ),
    ("drop partition purge", "ALTER TABLE sales.orders_orc DROP PARTITION (ds='2024-01-02') PURGE"),
    ("drop partition date", "ALTER TABLE sales.logs_txt DROP PARTITION (dt='2024-03-01')"),
    ("show partitions after ddl", "SHOW PARTITIONS sales.events"),
    ("show partitions orc after ddl", "SHOW PARTITIONS sales.orders_orc"),
    ("show partitions text after ddl", "SHOW PARTITIONS sales.logs_txt"),
    ("select orc after ddl", "SELECT * FROM sales.orders_orc"),
    (
        "write folder a for repair",
        "INSERT OVERWRITE DIRECTORY '{wh}/external/ext_part/ds=a' USING parquet SELECT 1L AS id",
    ),
    (
        "write folder b for repair",
        "INSERT OVERWRITE DIRECTORY '{wh}/external/ext_part/ds=b' USING parquet SELECT 2L AS id",
    ),
    (
        "create table on existing folders",
        "CREATE TABLE sales.ext_part (id bigint, ds string) USING parquet PARTITIONED BY (ds) "
        "LOCATION '{wh}/external/ext_part'",
    ),
    ("select before repair", "SELECT * FROM sales.ext_part"),
    ("msck repair", "MSCK REPAIR TABLE sales.ext_part"),
    ("show partitions after repair", "SHOW PARTITIONS sales.ext_part"),
    ("select after repair", "SELECT * FROM sales.ext_part"),
)

ALTER = _steps(
    "alter",
    (
        "set tblproperties",
        "ALTER TABLE sales.events SET TBLPROPERTIES ('team'='growth', 'retention.days'='30')",
    ),
    ("show tblproperties after set", "SHOW TBLPROPERTIES sales.events"),
    ("unset tblproperties", "ALTER TABLE sales.events UNSET TBLPROPERTIES ('retention.days')"),
    (
        "unset missing tblproperty",
        "ALTER TABLE sales.events UNSET TBLPROPERTIES IF EXISTS ('nope')",
    ),
    ("show tblproperties after unset", "SHOW TBLPROPERTIES sales.events"),
    ("show one tblproperty", "SHOW TBLPROPERTIES sales.events ('team')"),
    (
        "add columns",
        "ALTER TABLE sales.events ADD COLUMNS (country string COMMENT 'ISO code', score int)",
    ),
    (
        "change column comment",
        "ALTER TABLE sales.events CHANGE COLUMN amount amount double COMMENT 'in EUR'",
    ),
    ("alter column comment", "ALTER TABLE sales.events ALTER COLUMN name COMMENT 'customer name'"),
    ("describe after column changes", "DESCRIBE TABLE sales.events"),
    ("select old partition new columns", "SELECT * FROM sales.events WHERE ds = '2024-01-01'"),
    (
        "insert with new columns",
        "INSERT INTO sales.events PARTITION (ds='2024-01-06', hr=1) "
        "VALUES (20, 't', 20.0, 'de', 3)",
    ),
    ("select new columns", "SELECT * FROM sales.events WHERE country IS NOT NULL"),
    (
        "orc add columns",
        "ALTER TABLE sales.orders_orc ADD COLUMNS (note string COMMENT 'free text')",
    ),
    (
        "orc change column comment",
        "ALTER TABLE sales.orders_orc CHANGE COLUMN total total decimal(10,2) COMMENT 'gross'",
    ),
    ("describe orc after column changes", "DESCRIBE TABLE sales.orders_orc"),
    ("set serdeproperties datasource", "ALTER TABLE sales.events SET SERDEPROPERTIES ('k'='v')"),
    ("describe after serdeproperties", "DESCRIBE TABLE EXTENDED sales.events"),
    (
        "set serdeproperties hive",
        "ALTER TABLE sales.plain_hive SET SERDEPROPERTIES ('serialization.null.format'='-')",
    ),
    ("describe hive after serdeproperties", "DESCRIBE TABLE EXTENDED sales.plain_hive"),
    ("rename datasource", "ALTER TABLE sales.plain RENAME TO sales.plain_renamed"),
    ("select renamed datasource", "SELECT * FROM sales.plain_renamed"),
    ("describe renamed datasource", "DESCRIBE TABLE EXTENDED sales.plain_renamed"),
    ("rename hive", "ALTER TABLE sales.plain_hive RENAME TO sales.plain_hive2"),
    ("select renamed hive", "SELECT * FROM sales.plain_hive2"),
    ("rename partitioned hive", "ALTER TABLE sales.logs_txt RENAME TO sales.logs"),
    ("select renamed partitioned", "SELECT * FROM sales.logs"),
    ("show partitions renamed", "SHOW PARTITIONS sales.logs"),
    (
        "describe partition of renamed table",
        "DESCRIBE TABLE EXTENDED sales.logs PARTITION (dt='2024-02-01', hr=3)",
    ),
    ("show tables after renames", "SHOW TABLES IN sales"),
)

CTAS = _steps(
    "ctas",
    (
        "ctas datasource",
        "CREATE TABLE sales.ctas_ds USING parquet AS "
        "SELECT id, name FROM sales.events WHERE hr = 1",
    ),
    (
        "ctas orc",
        "CREATE TABLE sales.ctas_orc STORED AS ORC AS "
        "SELECT order_id, customer, total FROM sales.orders_orc",
    ),
    (
        "ctas partitioned",
        "CREATE TABLE sales.ctas_part USING parquet PARTITIONED BY (ds) AS "
        "SELECT id, name, ds FROM sales.events WHERE ds <= '2024-01-02'",
    ),
    ("select ctas datasource", "SELECT * FROM sales.ctas_ds"),
    ("select ctas orc", "SELECT * FROM sales.ctas_orc"),
    ("select ctas partitioned", "SELECT * FROM sales.ctas_part"),
    ("show partitions ctas", "SHOW PARTITIONS sales.ctas_part"),
    ("describe ctas orc", "DESCRIBE TABLE EXTENDED sales.ctas_orc"),
    ("describe ctas partitioned", "DESCRIBE TABLE EXTENDED sales.ctas_part"),
    ("truncate partition", "TRUNCATE TABLE sales.ctas_part PARTITION (ds='2024-01-01')"),
    ("select after truncate partition", "SELECT * FROM sales.ctas_part"),
    ("truncate partitioned", "TRUNCATE TABLE sales.ctas_part"),
    ("count after truncate partitioned", "SELECT count(*) FROM sales.ctas_part"),
    ("show partitions after truncate", "SHOW PARTITIONS sales.ctas_part"),
    ("truncate unpartitioned", "TRUNCATE TABLE sales.ctas_ds"),
    ("count after truncate", "SELECT count(*) FROM sales.ctas_ds"),
    ("insert after truncate", "INSERT INTO sales.ctas_ds VALUES (100, 'z')"),
    ("select after insert", "SELECT * FROM sales.ctas_ds"),
)

VIEWS = _steps(
    "views",
    (
        "create view",
        "CREATE VIEW sales.v_events (x COMMENT 'the id', ds) "
        "AS SELECT id, ds FROM sales.events WHERE ds = '2024-01-01'",
    ),
    ("select view", "SELECT * FROM sales.v_events"),
    ("describe view", "DESCRIBE TABLE EXTENDED sales.v_events"),
    (
        "alter view as",
        "ALTER VIEW sales.v_events AS SELECT id, name, ds FROM sales.events WHERE hr = 1",
    ),
    ("select altered view", "SELECT * FROM sales.v_events"),
    ("describe altered view", "DESCRIBE TABLE sales.v_events"),
    (
        "create second view",
        "CREATE VIEW sales.v_orders AS SELECT region, sum(total) AS total "
        "FROM sales.orders_orc GROUP BY region",
    ),
    ("select aggregate view", "SELECT * FROM sales.v_orders"),
    ("show views", "SHOW VIEWS IN sales"),
    ("show views like", "SHOW VIEWS IN sales LIKE 'v_e*'"),
    ("view set tblproperties", "ALTER VIEW sales.v_orders SET TBLPROPERTIES ('k'='v')"),
    ("view show tblproperties", "SHOW TBLPROPERTIES sales.v_orders ('k')"),
    ("rename view", "ALTER VIEW sales.v_orders RENAME TO sales.v_orders2"),
    ("select renamed view", "SELECT * FROM sales.v_orders2"),
    ("create or replace view", "CREATE OR REPLACE VIEW sales.v_orders2 AS SELECT 1 AS one"),
    ("select replaced view", "SELECT * FROM sales.v_orders2"),
    ("drop view", "DROP VIEW sales.v_orders2"),
    ("drop view if exists missing", "DROP VIEW IF EXISTS sales.v_missing"),
    ("show views after drop", "SHOW VIEWS IN sales"),
    ("show tables with views", "SHOW TABLES IN sales"),
)

FUNCTIONS = _steps(
    "functions",
    ("create function", f"CREATE FUNCTION sales.my_upper AS '{UPPER}'"),
    (
        "use function",
        "SELECT sales.my_upper(name) FROM sales.events WHERE ds = '2024-01-01'",
    ),
    ("describe function", "DESCRIBE FUNCTION sales.my_upper"),
    ("describe function extended", "DESCRIBE FUNCTION EXTENDED sales.my_upper"),
    ("show user functions", "SHOW USER FUNCTIONS IN sales"),
    ("show functions like", "SHOW FUNCTIONS IN sales LIKE 'my*'"),
    (
        "create function if not exists (exists)",
        f"CREATE FUNCTION IF NOT EXISTS sales.my_upper AS '{LOWER}'",
    ),
    ("create or replace function", f"CREATE OR REPLACE FUNCTION sales.my_upper AS '{LOWER}'"),
    ("use replaced function", "SELECT sales.my_upper('AbC')"),
    ("describe replaced function", "DESCRIBE FUNCTION sales.my_upper"),
    ("create function in current database", f"CREATE FUNCTION keep_fn AS '{UPPER}'"),
    ("use unqualified function", "SELECT keep_fn('x')"),
    ("show user functions two", "SHOW USER FUNCTIONS IN sales"),
    ("drop function", "DROP FUNCTION sales.my_upper"),
    ("drop function if exists (dropped)", "DROP FUNCTION IF EXISTS sales.my_upper"),
    ("show user functions after drop", "SHOW USER FUNCTIONS IN sales"),
)

ANALYZE = _steps(
    "analyze",
    ("table", "ANALYZE TABLE sales.plain_renamed COMPUTE STATISTICS"),
    ("describe table statistics", "DESCRIBE TABLE EXTENDED sales.plain_renamed"),
    ("columns", "ANALYZE TABLE sales.plain_renamed COMPUTE STATISTICS FOR COLUMNS id, name"),
    ("describe int column", "DESCRIBE EXTENDED sales.plain_renamed id"),
    ("describe string column", "DESCRIBE EXTENDED sales.plain_renamed name"),
    (
        "one partition",
        "ANALYZE TABLE sales.events PARTITION (ds='2024-01-02', hr=1) COMPUTE STATISTICS",
    ),
    (
        "describe analyzed partition",
        "DESCRIBE TABLE EXTENDED sales.events PARTITION (ds='2024-01-02', hr=1)",
    ),
    ("partial spec", "ANALYZE TABLE sales.events PARTITION (ds='2024-01-03') COMPUTE STATISTICS"),
    (
        "describe partition of partial spec",
        "DESCRIBE TABLE EXTENDED sales.events PARTITION (ds='2024-01-03', hr=12)",
    ),
    ("partitioned table", "ANALYZE TABLE sales.events COMPUTE STATISTICS"),
    (
        "partitioned columns",
        "ANALYZE TABLE sales.events COMPUTE STATISTICS FOR COLUMNS id, amount",
    ),
    ("describe partitioned column", "DESCRIBE EXTENDED sales.events id"),
    ("describe partitioned double column", "DESCRIBE EXTENDED sales.events amount"),
    ("describe partitioned table statistics", "DESCRIBE TABLE EXTENDED sales.events"),
    (
        "statistics survive set tblproperties",
        "ALTER TABLE sales.events SET TBLPROPERTIES ('after'='analyze')",
    ),
    ("describe column after alter", "DESCRIBE EXTENDED sales.events id"),
    ("orc columns", "ANALYZE TABLE sales.orders_orc COMPUTE STATISTICS FOR COLUMNS total"),
    ("describe orc column", "DESCRIBE EXTENDED sales.orders_orc total"),
    (
        "text partition",
        "ANALYZE TABLE sales.logs PARTITION (dt='2024-01-15', hr=4) COMPUTE STATISTICS",
    ),
    (
        "describe text partition statistics",
        "DESCRIBE TABLE EXTENDED sales.logs PARTITION (dt='2024-01-15', hr=4)",
    ),
)

ERRORS = _steps(
    "errors",
    ("select missing table", "SELECT * FROM sales.no_such_table"),
    ("select missing database", "SELECT * FROM no_such_db.t"),
    ("describe missing table", "DESCRIBE TABLE sales.no_such_table"),
    ("create existing datasource table", "CREATE TABLE sales.events (id int) USING parquet"),
    ("create existing hive table", "CREATE TABLE sales.orders_orc (x int) STORED AS ORC"),
    ("create existing database", "CREATE DATABASE sales"),
    ("add existing partition", "ALTER TABLE sales.events ADD PARTITION (ds='2024-01-01', hr=1)"),
    (
        "rename partition to existing",
        "ALTER TABLE sales.events PARTITION (ds='2024-01-01', hr=1) "
        "RENAME TO PARTITION (ds='2024-01-01', hr=2)",
    ),
    (
        "rename missing partition",
        "ALTER TABLE sales.events PARTITION (ds='2030-01-01', hr=1) "
        "RENAME TO PARTITION (ds='2030-01-02', hr=1)",
    ),
    ("drop missing partition", "ALTER TABLE sales.events DROP PARTITION (ds='2024-09-09', hr=0)"),
    ("show partitions unpartitioned", "SHOW PARTITIONS sales.plain_renamed"),
    ("rename table to existing", "ALTER TABLE sales.plain_renamed RENAME TO sales.events"),
    ("truncate external", "TRUNCATE TABLE sales.ext_t"),
    ("drop non-empty database", "DROP DATABASE sales"),
    ("drop missing database", "DROP DATABASE no_such_db"),
    ("set database location", "ALTER DATABASE sales SET LOCATION '{wh}/elsewhere.db'"),
    ("describe database after failed set location", "DESCRIBE DATABASE sales"),
    ("use missing function", "SELECT sales.nope_fn(1)"),
    ("describe missing function", "DESCRIBE FUNCTION sales.nope_fn"),
    ("drop missing function", "DROP FUNCTION sales.nope_fn"),
    ("drop function if exists missing", "DROP FUNCTION IF EXISTS sales.nope_fn"),
    ("create existing function", f"CREATE FUNCTION sales.keep_fn AS '{UPPER}'"),
    ("drop missing table", "DROP TABLE sales.no_such_table"),
    ("drop table if exists missing", "DROP TABLE IF EXISTS sales.no_such_table"),
    ("drop missing view", "DROP VIEW sales.no_such_view"),
    ("drop view on a table", "DROP VIEW sales.events"),
    ("drop table on a view", "DROP TABLE sales.v_events"),
)

DROPS = _steps(
    "drops",
    ("drop managed datasource", "DROP TABLE sales.ctas_ds"),
    ("managed data is deleted", "SELECT count(*) FROM parquet.`{wh}/sales.db/ctas_ds`"),
    ("recreate dropped table", "CREATE TABLE sales.ctas_ds (id bigint) USING parquet"),
    ("select recreated table", "SELECT count(*) FROM sales.ctas_ds"),
    ("drop external hive", "DROP TABLE sales.ext_t"),
    ("external data is kept", "SELECT count(*) FROM parquet.`{wh}/external/ext_t`"),
    ("drop external datasource", "DROP TABLE sales.ext_ds"),
    ("drop purge", "DROP TABLE sales.ctas_part PURGE"),
    ("drop managed orc", "DROP TABLE sales.ctas_orc"),
    ("drop view", "DROP VIEW sales.v_events"),
    ("show tables after drops", "SHOW TABLES IN sales"),
    ("drop empty database", "DROP DATABASE scratch"),
    ("leave the database", "USE default"),
    ("drop database cascade", "DROP DATABASE sales CASCADE"),
    ("show databases after cascade", "SHOW DATABASES"),
    ("database folder is deleted", "SELECT count(*) FROM parquet.`{wh}/sales.db/events`"),
    ("recreate database", "CREATE DATABASE sales"),
    ("recreated database has no tables", "SHOW TABLES IN sales"),
    ("recreated database has no functions", "SHOW USER FUNCTIONS IN sales"),
    ("drop recreated database", "DROP DATABASE sales"),
    ("show databases at the end", "SHOW DATABASES"),
)

STEPS: tuple[Step, ...] = (
    *DATABASES,
    *TABLES,
    *INSERTS,
    *PRUNING,
    *PARTITIONS,
    *ALTER,
    *CTAS,
    *VIEWS,
    *FUNCTIONS,
    *ANALYZE,
    *ERRORS,
    *DROPS,
)
assert [s.section for s in STEPS] == sorted((s.section for s in STEPS), key=SECTIONS.index), (
    "steps run section by section"
)
assert len({(s.section, s.name) for s in STEPS}) == len(STEPS), "step names are unique"
