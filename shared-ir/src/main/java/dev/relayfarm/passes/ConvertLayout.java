package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ops.layout.Layout;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Converts convolutions (and, when asked, pools) to the desired data layouts (TVM's
 * {@code ConvertLayout}), inserting {@code layout_transform} only where a value enters or leaves a
 * region in the new layout; element-wise ops, bias adds, concatenations and pools in between follow
 * the new layout (see {@link LayoutRewriter} for the rules), and back-to-back inverse transforms
 * cancel.
 * <pre>
 * %y = nn.conv2d(%x, %w);  nn.relu(%y)          (NCHW / OIHW)
 *   ==>  %y = nn.conv2d(layout_transform(%x, "NCHW", "NHWC"), layout_transform(%w, "OIHW", "HWIO"),
 *                       data_layout="NHWC", kernel_layout="HWIO");
 *        layout_transform(nn.relu(%y), "NHWC", "NCHW")
 * </pre>
 * Not done: operators without a rule (reshape, dense, softmax, reductions, ...) read their input in
 * the original layout, so a transform back is placed before them; values crossing let bindings,
 * tuples and calls of functions go back to the original layout too; only the operators named in
 * {@link Options#desiredLayouts} are converted on their own.
 */
public final class ConvertLayout extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("convert-layout", 3,
            "rewrites conv2d (default NCHW -> NHWC/HWIO) and followers to desired layouts with minimal layout_transforms");

    /**
     * Desired layouts per operator, as TVM's {@code desired_layouts}: {@code nn.conv2d} takes
     * {@code [data, kernel]} (kernel {@code "default"}: HWIO for NHWC, OIHW for NCHW); the pools
     * ({@code nn.max_pool2d}, {@code nn.avg_pool2d}, {@code nn.global_avg_pool2d},
     * {@code nn.global_max_pool2d}) take {@code [layout]}.
     */
    public record Options(Map<String, List<String>> desiredLayouts) {
        public Options {
            desiredLayouts = new LinkedHashMap<>(desiredLayouts);
            for (Map.Entry<String, List<String>> e : desiredLayouts.entrySet()) {
                e.setValue(List.copyOf(e.getValue()));
                check(e.getKey(), e.getValue());
            }
            desiredLayouts = java.util.Collections.unmodifiableMap(desiredLayouts);
        }

        public static Options defaults() {
            return new Options(Map.of("nn.conv2d", List.of("NHWC", "HWIO")));
        }

        private static void check(String op, List<String> layouts) {
            switch (op) {
                case "nn.conv2d" -> {
                    if (layouts.size() != 2) throw new IllegalArgumentException("convert-layout: nn.conv2d wants [data, kernel] layouts, got " + layouts);
                    permutation(op, layouts.get(0), "NCHW");
                    kernelFor(op, layouts.get(0), layouts.get(1));
                }
                case "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d" -> {
                    if (layouts.size() != 1) throw new IllegalArgumentException("convert-layout: " + op + " wants [layout], got " + layouts);
                    permutation(op, layouts.get(0), "NCHW");
                }
                default -> throw new IllegalArgumentException("convert-layout: no layout conversion for operator " + op
                        + " (known: nn.conv2d, nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d)");
            }
        }

        static Layout permutation(String op, String text, String canonical) {
            Layout l;
            try {
                l = Layout.parse(text);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("convert-layout: " + op + ": " + e.getMessage());
            }
            if (l.isBlocked() || l.rank() != canonical.length() || !l.primalSet().equals(Layout.parse(canonical).primalSet())) {
                throw new IllegalArgumentException("convert-layout: " + op + ": layout must be a permutation of " + canonical + ", got \"" + text + "\"");
            }
            return l;
        }

        static Layout kernelFor(String op, String data, String kernel) {
            if (!kernel.equals("default")) return permutation(op, kernel, "OIHW");
            return switch (data) {
                case "NHWC" -> Layout.parse("HWIO");
                case "NCHW" -> Layout.parse("OIHW");
                default -> throw new IllegalArgumentException("convert-layout: " + op + ": no default kernel layout for data layout " + data);
            };
        }
    }

    private final Map<String, AlterLayoutHook> hooks;

    public ConvertLayout() {
        this(Options.defaults());
    }

    public ConvertLayout(Options options) {
        super(INFO);
        Map<String, AlterLayoutHook> m = new LinkedHashMap<>();
        options.desiredLayouts().forEach((op, layouts) -> m.put(op, op.equals("nn.conv2d")
                ? conv2d(Layout.parse(layouts.get(0)), Options.kernelFor(op, layouts.get(0), layouts.get(1)))
                : pool(Layout.parse(layouts.get(0)))));
        this.hooks = Map.copyOf(m);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        return (Function) new LayoutRewriter(hooks, context.types()).rewrite(function);
    }

    private static AlterLayoutHook conv2d(Layout data, Layout kernel) {
        return (call, argTypes, resultType) -> {
            Layout d = LayoutRewriter.layoutAttr(call.attrs(), "data_layout", "NCHW");
            Layout k = LayoutRewriter.layoutAttr(call.attrs(), "kernel_layout", "OIHW");
            if (d == null || k == null) return Optional.empty();
            Layout out = LayoutRewriter.layoutAttr(call.attrs(), "out_layout", d.name());
            if (out == null || d.equals(data) && k.equals(kernel) && out.equals(data)) return Optional.empty();
            Attrs attrs = call.attrs().with("data_layout", AttrValue.of(data.name())).with("kernel_layout", AttrValue.of(kernel.name()))
                    .without("out_layout");
            return Optional.of(new LayoutChange(List.of(d, k), List.of(data, kernel), out, data, args -> rebuilt(call, args, attrs)));
        };
    }

    private static AlterLayoutHook pool(Layout layout) {
        return (call, argTypes, resultType) -> {
            Layout l = LayoutRewriter.layoutAttr(call.attrs(), "layout", "NCHW");
            if (l == null) return Optional.empty();
            Layout out = LayoutRewriter.layoutAttr(call.attrs(), "out_layout", l.name());
            if (out == null || l.equals(layout) && out.equals(layout)) return Optional.empty();
            Attrs attrs = call.attrs().with("layout", AttrValue.of(layout.name())).without("out_layout");
            return Optional.of(new LayoutChange(List.of(l), List.of(layout), out, layout, args -> rebuilt(call, args, attrs)));
        };
    }

    static Call rebuilt(Call call, List<Expr> args, Attrs attrs) {
        return new Call(call.callee(), args, attrs, List.of(), call.span());
    }
}
