import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.hadoop.hive.metastore.api.PartitionsStatsRequest;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;

/**
 * A planner's round (the table, its partition names, a day's partitions by filter and their
 * statistics) repeated by four threads of one JVM, each with a connection of its own, through
 * the Thrift client generated from Hive 2.3.10's IDL (the client Spark's planner uses), over
 * the unframed socket and binary protocol.
 *
 * <p>Usage: {@code PlannerRounds SECONDS DATABASE TABLE DAYS HOURS COLUMNS FIRST_DAY PORT...}:
 * thread i talks to PORT[i % number of ports]. Each thread first makes one untimed round per
 * day; once all have, they make rounds for SECONDS, the n-th on day n % DAYS. Prints one line,
 * {@code ROUNDS <rounds> SECONDS <elapsed>}; when a call fails (or a server does not answer
 * within a minute), {@code FAIL <error>} and exits with 1.
 */
public final class PlannerRounds {
  private static final int PLANNERS = 4;
  private static final int TIMEOUT_MS = 60_000;

  private PlannerRounds() {}

  public static void main(String[] args) throws Exception {
    double seconds = Double.parseDouble(args[0]);
    String db = args[1];
    String table = args[2];
    int days = Integer.parseInt(args[3]);
    int hours = Integer.parseInt(args[4]);
    int columns = Integer.parseInt(args[5]);
    java.time.LocalDate firstDay = java.time.LocalDate.parse(args[6]);
    List<Integer> ports = new ArrayList<>();
    for (int i = 7; i < args.length; i++) {
      ports.add(Integer.parseInt(args[i]));
    }
    List<String> columnNames = new ArrayList<>();
    for (int c = 0; c < columns; c++) {
      columnNames.add("c" + c);
    }
    // Every thread counts down READY once, warmed up or failed; GO starts the timed rounds.
    CountDownLatch ready = new CountDownLatch(PLANNERS);
    CountDownLatch go = new CountDownLatch(1);
    AtomicBoolean stop = new AtomicBoolean();
    long[] rounds = new long[PLANNERS];
    Throwable[] failures = new Throwable[PLANNERS];
    Thread[] threads = new Thread[PLANNERS];
    for (int i = 0; i < PLANNERS; i++) {
      int index = i;
      threads[i] =
          new Thread(
              () -> {
                TSocket socket = null;
                ThriftHiveMetastore.Client client = null;
                try {
                  socket = new TSocket("127.0.0.1", ports.get(index % ports.size()), TIMEOUT_MS);
                  client = new ThriftHiveMetastore.Client(new TBinaryProtocol(socket));
                  socket.open();
                  for (int d = 0; d < days; d++) {
                    String day = firstDay.plusDays(d).toString();
                    round(client, db, table, day, hours, columnNames);
                  }
                } catch (Throwable e) {
                  failures[index] = e;
                  stop.set(true);
                } finally {
                  ready.countDown();
                }
                if (failures[index] == null) {
                  try {
                    go.await();
                    long n = 0;
                    while (!stop.get()) {
                      String day = firstDay.plusDays(n % days).toString();
                      round(client, db, table, day, hours, columnNames);
                      n++;
                    }
                    rounds[index] = n;
                  } catch (Throwable e) {
                    failures[index] = e;
                    stop.set(true);
                  }
                }
                if (socket != null) {
                  socket.close();
                }
              });
      threads[i].setDaemon(true);
      threads[i].start();
    }
    ready.await();
    long began = System.nanoTime();
    go.countDown();
    long end = began + (long) (seconds * 1e9);
    while (!stop.get() && System.nanoTime() < end) {
      Thread.sleep(10);
    }
    stop.set(true);
    for (Thread thread : threads) {
      thread.join();
    }
    double elapsed = (System.nanoTime() - began) / 1e9;
    for (Throwable failure : failures) {
      if (failure != null) {
        System.out.println("FAIL " + failure);
        System.exit(1);
      }
    }
    long total = 0;
    for (long n : rounds) {
      total += n;
    }
    System.out.println("ROUNDS " + total + " SECONDS " + elapsed);
  }

  private static void round(
      ThriftHiveMetastore.Client client,
      String db,
      String table,
      String day,
      int hours,
      List<String> columns)
      throws Exception {
    client.get_table(db, table);
    client.get_partition_names(db, table, (short) -1);
    client.get_partitions_by_filter(db, table, "ds = \"" + day + "\"", (short) -1);
    List<String> names = new ArrayList<>();
    for (int h = 0; h < hours; h++) {
      names.add("ds=" + day + "/hr=" + h);
    }
    client.get_partitions_statistics_req(new PartitionsStatsRequest(db, table, columns, names));
  }
}
