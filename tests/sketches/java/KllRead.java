import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.datasketches.kll.KllFloatsSketch;
import org.apache.datasketches.memory.Memory;
import org.apache.datasketches.quantilescommon.QuantileSearchCriteria;

/**
 * Reads serialized KLL float sketches, one hex line each on stdin, as Hive reads them, and
 * prints per sketch: N, min, max, the inclusive quantile at rank 0.5, the sketch written
 * back (hex), and N after a merge into a new sketch and one more update.
 */
public class KllRead {
  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      byte[] bytes = HexFormat.of().parseHex(line.trim());
      KllFloatsSketch sketch = KllFloatsSketch.heapify(Memory.wrap(bytes));
      // Written back first: a quantile query sorts level 0 in place.
      String written = HexFormat.of().formatHex(sketch.toByteArray());
      KllFloatsSketch union = KllFloatsSketch.newHeapInstance(sketch.getK());
      union.merge(sketch);
      union.update(1.0f);
      System.out.println(
          sketch.getN() + " " + sketch.getMinItem() + " " + sketch.getMaxItem() + " "
              + sketch.getQuantile(0.5, QuantileSearchCriteria.INCLUSIVE) + " "
              + written + " " + union.getN());
    }
  }
}
