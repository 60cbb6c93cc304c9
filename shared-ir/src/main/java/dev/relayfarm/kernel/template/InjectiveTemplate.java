package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An element-wise, broadcast or injective output (everything before it inlined): either the innermost
 * axis as SIMD lanes under the fused, parallel outer axes ({@code inner}: no index division in the
 * loop, the choice for blocked layouts like {@code NCHW16c}), or all axes fused and split into
 * {@code chunk}-element vector runs ({@code flat}).
 *
 * <p>Knobs: {@code form} ({@code inner} or {@code flat}), {@code chunk} (flat run length),
 * {@code parallel} (1 = threads over the outer loop).
 */
public final class InjectiveTemplate implements ScheduleTemplate {
    public static final String NAME = "injective.x86";
    private final Compute out;
    private final String workload;

    public InjectiveTemplate(Compute out, String workload) {
        this.out = out;
        this.workload = workload;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String workload() {
        return workload;
    }

    @Override
    public Compute anchor() {
        return out;
    }

    @Override
    public List<Compute> stages() {
        return List.of(out);
    }

    private long size() {
        return out.shape().stream().mapToLong(Integer::longValue).reduce(1, (a, b) -> a * b);
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(
                Knob.choices("form", out.axes().size() >= 2 ? List.of("flat", "inner") : List.of("flat"), "flat: all axes fused and split; inner: innermost axis vectorized"),
                Knob.ints("chunk", List.of(16, 32, 64, 128, 256), "elements per vector run in the flat form"),
                Knob.ints("parallel", List.of(0, 1), "1 = threads over the outer loop")));
    }

    @Override
    public ScheduleConfig defaultConfig() {
        int inner = out.axes().isEmpty() ? 1 : out.axes().getLast().extent();
        // a 4-lane block (NCHW4c) is still better as the vector than fused axes that divide per element
        boolean innerForm = out.axes().size() >= 2 && inner >= 4 && inner <= 1024;
        return new ScheduleConfig(NAME, Map.of("form", innerForm ? "inner" : "flat", "chunk", 64, "parallel", size() >= 16384 ? 1 : 0));
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        if ("inner".equals(c.knobs().get("form")) && out.axes().size() < 2) {
            throw new InvalidConfigException(NAME + ": form=inner needs at least 2 axes, " + out.name() + " has shape " + out.shape());
        }
        space().check(c);
    }

    @Override
    public Schedule schedule(ScheduleConfig c, Compute o) {
        validate(c);
        List<Primitive> ps = new ArrayList<>();
        if (o.axes().isEmpty()) return new Schedule(ps);
        List<String> ax = Tiles.axisNames(o);
        String n = o.name();
        boolean par = c.getInt("parallel") == 1;
        if (c.getString("form").equals("inner")) {
            String fused = Tiles.fuseAll(ps, n, ax.subList(0, ax.size() - 1));
            if (par) ps.add(new Primitive.Parallel(n, fused));
            ps.add(new Primitive.Vectorize(n, ax.getLast()));
            return new Schedule(ps);
        }
        String fused = Tiles.fuseAll(ps, n, ax);
        if (size() > c.getInt("chunk")) {
            ps.add(new Primitive.Split(n, fused, c.getInt("chunk")));
            if (par) ps.add(new Primitive.Parallel(n, fused + "_o"));
            ps.add(new Primitive.Vectorize(n, fused + "_i"));
        } else {
            ps.add(new Primitive.Vectorize(n, fused));
        }
        return new Schedule(ps);
    }
}
