package dev.relayfarm.tuning.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.TuningTasks;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Features of real lowered loop nests: finite, fixed-length, and they see the tiling. */
class LoopNestFeaturesTest {
    private static double raw(float[] v, String name) {
        return SyntheticCost.raw(v, name);
    }

    @Test
    void everyConfigurationOfEveryTaskHasFiniteFeaturesOfOneLength() {
        for (String model : List.of(SearchTasks.CONV, SearchTasks.DENSE)) {
            for (int opt : new int[] {1, 3}) {
                for (TuningTask t : TuningModels.tasks(model, opt)) {
                    TaskFeatures f = new TaskFeatures(t);
                    long lowered = 0;
                    for (long i = 0; i < t.space().size(); i++) {
                        java.util.Optional<float[]> features = f.of(i);
                        if (features.isEmpty()) {
                            // no features only where the template refuses the config (a tile past the registers, an unroll too long to compile)
                            ScheduleConfig c = t.space().get(i);
                            assertThrows(InvalidConfigException.class, () -> TuningTasks.lower(t, c), t.key() + " " + c + " does not lower");
                            continue;
                        }
                        lowered++;
                        float[] v = features.get();
                        assertEquals(LoopNestFeatures.length(), v.length);
                        for (float x : v) assertTrue(Float.isFinite(x), t.key() + ": " + Arrays.toString(v));
                    }
                    assertTrue(lowered * 2 > t.space().size(), t.key() + ": most of the space lowers");
                }
            }
        }
    }

    @Test
    void configurationsThatTileDifferentlyHaveDifferentFeatures() {
        TuningTask conv = SearchTasks.conv();
        TaskFeatures f = new TaskFeatures(conv);
        Set<String> distinct = new HashSet<>();
        for (long i = 0; i < conv.space().size(); i++) distinct.add(Arrays.toString(f.of(i).orElseThrow()));
        assertEquals(conv.space().size(), distinct.size(), "every configuration of the conv2d space has its own features");
    }

    @Test
    void theRegisterTileShowsInTheFeatures() {
        TuningTask conv = SearchTasks.conv();
        TaskFeatures f = new TaskFeatures(conv);
        ScheduleConfig c = conv.defaultConfig().with("oc_bn", 4).with("reg_n", 15);
        float[] v = f.of(c).orElseThrow();
        // the accumulator tile is oc_bn x reg_n floats, its columns the SIMD lanes, its channels unrolled
        assertEquals(4 * 15, raw(v, "max_local_alloc_elements"), 1e-3);
        assertEquals(15, raw(v, "s0.vector_width"), 1e-3);
        assertEquals(1, v[LoopNestFeatures.index("s0.local_store")]);
        assertTrue(raw(v, "s0.unroll_product") >= 4, Arrays.toString(v));
        // the same work whatever the tile
        float[] w = f.of(conv.defaultConfig().with("oc_bn", 1).with("reg_n", 1)).orElseThrow();
        assertEquals(raw(v, "total_flops"), raw(w, "total_flops"), raw(v, "total_flops") * 1e-5);
        assertTrue(raw(w, "s0.bytes_l3") < raw(v, "s0.bytes_l3"), "a 1x1 tile touches less in its innermost loops");
        assertFalse(Arrays.equals(v, w));
    }

    @Test
    void aConfigurationThatDoesNotLowerHasNoFeatures() {
        TuningTask conv = SearchTasks.conv();
        TaskFeatures f = new TaskFeatures(conv);
        assertTrue(f.of(conv.defaultConfig().with("reg_n", 7)).isEmpty(), "7 does not divide the output width 30");
    }
}
