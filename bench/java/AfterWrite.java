import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.apache.hadoop.hive.metastore.api.ColumnStatistics;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsData;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsDesc;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsObj;
import org.apache.hadoop.hive.metastore.api.LongColumnStatsData;
import org.apache.hadoop.hive.metastore.api.PartitionsStatsRequest;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;

/**
 * The reads of every partition of a table right after a write of one partition's statistics,
 * through the Thrift client generated from Hive 2.3.10's IDL (the client of Java planners:
 * Spark's, Hive's; Trino's is generated from the same IDL), over the unframed socket and
 * binary protocol: what bench/planner_bench.py times with the Python client, without the
 * Python client's decoding of the answers.
 *
 * <p>Usage: {@code AfterWrite PORT DATABASE COLUMNS REPEAT BUDGET WARMUP FIRST_DAY HOURS
 * (TABLE COUNT)...}: the partitions of TABLE are the first COUNT of ds=FIRST_DAY+n/HOURS,
 * hr=n%HOURS. For each table and each read (get_partitions_statistics_req and
 * get_aggr_stats_for of columns c0..c(COLUMNS-1), get_partitions_by_names), WARMUP times
 * untimed, then up to REPEAT times timed (fewer once BUDGET seconds have passed and at least
 * 3 were timed): an untimed update_partition_column_statistics of one partition (a different
 * one each time), then the read. Prints a line per table and read, {@code P50 <read> <table> <milliseconds>};
 * when a call fails, {@code FAIL <error>} and exits with 1.
 */
public final class AfterWrite {
  private static final int TIMEOUT_MS = 60_000;
  private static final List<String> READS =
      Arrays.asList(
          "get_partitions_statistics_req", "get_aggr_stats_for", "get_partitions_by_names");

  private AfterWrite() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    String db = args[1];
    int columns = Integer.parseInt(args[2]);
    int repeat = Integer.parseInt(args[3]);
    long budget = (long) (Double.parseDouble(args[4]) * 1e9);
    int warmup = Integer.parseInt(args[5]);
    java.time.LocalDate firstDay = java.time.LocalDate.parse(args[6]);
    int hours = Integer.parseInt(args[7]);
    List<String> columnNames = new ArrayList<>();
    for (int c = 0; c < columns; c++) {
      columnNames.add("c" + c);
    }
    TSocket socket = new TSocket("127.0.0.1", port, TIMEOUT_MS);
    ThriftHiveMetastore.Client client = new ThriftHiveMetastore.Client(new TBinaryProtocol(socket));
    socket.open();
    long written = 0;
    try {
      for (int i = 8; i + 1 < args.length; i += 2) {
        String table = args[i];
        int count = Integer.parseInt(args[i + 1]);
        List<String> names = new ArrayList<>();
        for (int n = 0; n < count; n++) {
          names.add("ds=" + firstDay.plusDays(n / hours) + "/hr=" + (n % hours));
        }
        PartitionsStatsRequest request = new PartitionsStatsRequest(db, table, columnNames, names);
        for (String read : READS) {
          List<Long> samples = new ArrayList<>();
          long timedFrom = 0;
          for (int k = 0; k < warmup + repeat; k++) {
            if (k == warmup) {
              timedFrom = System.nanoTime();
            } else if (samples.size() >= 3 && System.nanoTime() - timedFrom > budget) {
              break;
            }
            String part = names.get((int) (written * 7 % count));
            client.update_partition_column_statistics(
                statistics(db, table, part, columns, written));
            written++;
            long began = System.nanoTime();
            if (read.equals("get_partitions_statistics_req")) {
              client.get_partitions_statistics_req(request);
            } else if (read.equals("get_aggr_stats_for")) {
              client.get_aggr_stats_for(request);
            } else {
              client.get_partitions_by_names(db, table, names);
            }
            long took = System.nanoTime() - began;
            if (k >= warmup) {
              samples.add(took);
            }
          }
          Collections.sort(samples);
          double p50 = samples.get(samples.size() / 2) / 1e6;
          System.out.println("P50 " + read + " " + table + " " + p50);
        }
      }
    } catch (Exception e) {
      System.out.println("FAIL " + e);
      System.exit(1);
    } finally {
      socket.close();
    }
  }

  private static ColumnStatistics statistics(
      String db, String table, String part, int columns, long seed) {
    ColumnStatisticsDesc desc = new ColumnStatisticsDesc(false, db, table);
    desc.setPartName(part);
    List<ColumnStatisticsObj> objs = new ArrayList<>();
    for (int c = 0; c < columns; c++) {
      LongColumnStatsData data = new LongColumnStatsData(seed % 7, 100 + c);
      data.setLowValue(-seed - c);
      data.setHighValue(seed + c);
      objs.add(
          new ColumnStatisticsObj("c" + c, "bigint", ColumnStatisticsData.longStats(data)));
    }
    return new ColumnStatistics(desc, objs);
  }
}
