import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.hive.metastore.api.CheckLockRequest;
import org.apache.hadoop.hive.metastore.api.DataOperationType;
import org.apache.hadoop.hive.metastore.api.HeartbeatRequest;
import org.apache.hadoop.hive.metastore.api.LockComponent;
import org.apache.hadoop.hive.metastore.api.LockLevel;
import org.apache.hadoop.hive.metastore.api.LockRequest;
import org.apache.hadoop.hive.metastore.api.LockResponse;
import org.apache.hadoop.hive.metastore.api.LockState;
import org.apache.hadoop.hive.metastore.api.LockType;
import org.apache.hadoop.hive.metastore.api.NoSuchLockException;
import org.apache.hadoop.hive.metastore.api.ShowLocksRequest;
import org.apache.hadoop.hive.metastore.api.ShowLocksResponseElement;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.hadoop.hive.metastore.api.UnlockRequest;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;

/**
 * Takes HMS locks with the Thrift client generated from Hive 2.3.10's IDL, as Hive 2.3 and
 * Java Iceberg on it do: components with 2.3's {@code isAcid} (field 7, Hive 4's
 * {@code isTransactional}) and an operation type.
 *
 * <p>Usage: {@code HiveLockClient PORT DATABASE}. Prints {@code OK <check>} or
 * {@code FAIL <check>: <why>} per check and exits with 1 if any check failed.
 */
public final class HiveLockClient {
  static int failures = 0;

  static void check(String name, boolean ok, String why) {
    if (ok) {
      System.out.println("OK " + name);
    } else {
      failures++;
      System.out.println("FAIL " + name + ": " + why);
    }
  }

  static LockRequest request(String db, String table, boolean acid) {
    LockComponent component = new LockComponent(LockType.EXCLUSIVE, LockLevel.TABLE, db);
    component.setTablename(table);
    component.setIsAcid(acid);
    component.setOperationType(DataOperationType.UPDATE);
    LockRequest request = new LockRequest(Arrays.asList(component), "etl", "worker-7");
    request.setAgentInfo("Iceberg-" + table + "-" + acid);
    return request;
  }

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    String db = args[1];
    TSocket socket = new TSocket("127.0.0.1", port);
    socket.open();
    ThriftHiveMetastore.Client client =
        new ThriftHiveMetastore.Client(new TBinaryProtocol(socket));

    LockResponse held = client.lock(request(db, "t", true));
    check("lock isAcid=true", held.getState() == LockState.ACQUIRED, String.valueOf(held));
    LockResponse waiting = client.lock(request(db, "t", false));
    check("lock isAcid=false waits", waiting.getState() == LockState.WAITING, "" + waiting);

    List<ShowLocksResponseElement> shown =
        client.show_locks(new ShowLocksRequest()).getLocks();
    long mine = shown.stream().filter(e -> db.equals(e.getDbname())).count();
    check("show_locks", mine == 2, shown.toString());
    boolean named =
        shown.stream()
            .anyMatch(
                e ->
                    e.getLockid() == held.getLockid()
                        && "Iceberg-t-true".equals(e.getAgentInfo())
                        && "etl".equals(e.getUser())
                        && "worker-7".equals(e.getHostname()));
    check("show_locks names the holder", named, shown.toString());

    client.heartbeat(new HeartbeatRequest());  // neither a lock nor a transaction
    HeartbeatRequest beat = new HeartbeatRequest();
    beat.setLockid(held.getLockid());
    client.heartbeat(beat);
    check("heartbeat", true, "");

    client.unlock(new UnlockRequest(held.getLockid()));
    LockResponse now = client.check_lock(new CheckLockRequest(waiting.getLockid()));
    check("check_lock acquires", now.getState() == LockState.ACQUIRED, String.valueOf(now));
    client.unlock(new UnlockRequest(waiting.getLockid()));

    try {
      client.check_lock(new CheckLockRequest(waiting.getLockid()));
      check("check_lock after unlock -> NoSuchLockException", false, "no exception");
    } catch (NoSuchLockException e) {
      check("check_lock after unlock -> NoSuchLockException", true, "");
    }
    socket.close();
    System.exit(failures == 0 ? 0 : 1);
  }
}
