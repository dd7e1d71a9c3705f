import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.Database;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Hive 2.3's own metastore client (HiveMetaStoreClient, what Spark's HiveClientImpl uses) against
 * a secured colstats port, configured as a Hive or Spark user configures it.
 *
 * <p>Usage: {@code HiveSecureClient MODE URI [key=value ...] [OP ...]}. MODE:
 *
 * <ul>
 *   <li>{@code sasl}: Kerberos ({@code hive.metastore.sasl.enabled=true}). Keys: {@code protection}
 *       (hadoop.rpc.protection: authentication, integrity or privacy), {@code user} and {@code
 *       keytab} (a keytab login; without them, the ticket cache KRB5CCNAME names).
 *   <li>{@code tls}: {@code hive.metastore.use.SSL=true}. Keys: {@code truststore}, {@code
 *       truststorePassword}.
 *   <li>{@code plain}: neither.
 * </ul>
 *
 * <p>OPs: {@code create:DB}, {@code get:DB}, {@code drop:DB}, {@code list}. Prints "OK op" or
 * "FAILED op: exception: message" for each; when the client cannot connect, "ERROR" lines with the
 * whole cause chain and exit status 2.
 */
public final class HiveSecureClient {
  public static void main(String[] args) throws Exception {
    String mode = args[0];
    Map<String, String> options = new HashMap<>();
    java.util.List<String> ops = new java.util.ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq > 0) {
        options.put(args[i].substring(0, eq), args[i].substring(eq + 1));
      } else {
        ops.add(args[i]);
      }
    }
    HiveConf conf = new HiveConf();
    conf.set("hive.metastore.uris", args[1]);
    conf.set("hive.metastore.connect.retries", "1");
    conf.set("hive.metastore.client.connect.retry.delay", "0s");
    conf.set("hive.metastore.client.socket.timeout", "30s");
    if (mode.equals("sasl")) {
      conf.set("hive.metastore.sasl.enabled", "true");
      conf.set("hive.metastore.kerberos.principal", "hive/_HOST@COLSTATS.TEST");
      conf.set("hadoop.security.authentication", "kerberos");
      conf.set("hadoop.rpc.protection", options.getOrDefault("protection", "privacy"));
      UserGroupInformation.setConfiguration(conf);
      if (options.containsKey("keytab")) {
        UserGroupInformation.loginUserFromKeytab(options.get("user"), options.get("keytab"));
      }
    } else if (mode.equals("tls")) {
      conf.set("hive.metastore.use.SSL", "true");
      conf.set("hive.metastore.truststore.path", options.get("truststore"));
      conf.set("hive.metastore.truststore.password", options.get("truststorePassword"));
    }
    HiveMetaStoreClient client;
    try {
      client = new HiveMetaStoreClient(conf);
      client.getAllDatabases(); // TLS handshakes happen on the first call
    } catch (Throwable t) {
      for (Throwable c = t; c != null; c = c.getCause()) {
        System.out.println("ERROR " + c.getClass().getName() + ": " + c.getMessage());
      }
      System.exit(2);
      return;
    }
    for (String op : ops) {
      String[] parts = op.split(":", 2);
      try {
        switch (parts[0]) {
          case "create":
            Map<String, String> params = new HashMap<>();
            params.put("by", "HiveSecureClient");
            client.createDatabase(new Database(parts[1], "", "file:/tmp/" + parts[1], params));
            break;
          case "get":
            if (!client.getDatabase(parts[1]).getName().equals(parts[1])) {
              throw new IllegalStateException("wrong database");
            }
            break;
          case "drop":
            client.dropDatabase(parts[1], true, false, false);
            break;
          case "list":
            client.getAllDatabases();
            break;
          default:
            throw new IllegalArgumentException("unknown op " + op);
        }
        System.out.println("OK " + op);
      } catch (Exception e) {
        System.out.println("FAILED " + op + ": " + e.getClass().getName() + ": " + e.getMessage());
      }
    }
    client.close();
  }
}
