package dev.relayfarm.vta.compile;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Splits a realized quantized module's {@code @main} between the accelerator and the CPU: every region
 * {@link LayerMatcher} accepts (an int8 conv2d / dense and its integer epilogue) becomes one call
 * {@code vta.layer(%input, layer=i)}, and everything else stays as it is, for the CPU.
 *
 * <pre>
 * %4 = nn.conv2d(%3, meta[0], ..., out_dtype="int32"); %5 = nn.bias_add(%4, meta[1]); %6 = cast(%5, "int64"); ...
 * %11 = cast(%10, dtype="uint8")
 *   ==>  %11 = vta.layer(%3, layer=0)
 * </pre>
 *
 * Values crossing between the two devices go through {@code device_copy} ({@link #placeCopies}).
 * {@code vta.layer} and {@code device_copy} are not registered operators: the rewritten module runs through
 * {@link OffloadedModule}, which resolves a layer to its lowered program and counts the copies' bytes. The packing
 * into the accelerator's layout ({@link BlockedLayout}) happens inside each call. Not done: other functions than
 * {@code @main}.
 */
public final class VtaPartition {
    public static final String OP = "vta.layer";
    /** TVM's name for a copy between devices; like {@link #OP}, {@link OffloadedModule} interprets it. */
    public static final String DEVICE_COPY = "device_copy";
    public static final String HOST = "cpu", ACCELERATOR = "vta";

    private VtaPartition() {
    }

    /**
     * The rewritten module and the offloaded layers, indexed by the calls' {@code layer} attribute; {@code references}
     * holds, at the same index, each layer's region as the Relay function of its input ({@code fn (%data) { region }}),
     * which the interpreter runs as the layer's CPU int8 reference (the tuning measurer checks every schedule with it).
     */
    public record Result(IRModule module, List<QuantizedLayer> layers, List<Function> references) {
        public Result {
            layers = List.copyOf(layers);
            references = List.copyOf(references);
            if (references.size() != layers.size()) throw new IllegalArgumentException(layers.size() + " layers but " + references.size() + " references");
        }
    }

    public static Result partition(IRModule module) {
        Function main = module.main().orElseThrow(() -> new IllegalArgumentException("vta partition: the module has no @main"));
        InferResult types = TypeInference.infer(module);
        Map<Expr, List<Expr>> users = new IdentityHashMap<>();
        List<Expr> order = ExprTraversal.postOrder(main.body());
        for (Expr e : order) {
            for (Expr child : e.children()) users.computeIfAbsent(child, k -> new ArrayList<>()).add(e);
        }
        users.computeIfAbsent(main.body(), k -> new ArrayList<>()).add(main);
        LayerMatcher matcher = new LayerMatcher(types::typeOf, users);
        Map<Expr, Integer> regionEnds = new IdentityHashMap<>();
        List<LayerMatcher.Match> matches = new ArrayList<>();
        int convs = 0, denses = 0;
        for (Expr e : order) {
            if (!(e instanceof Call c) || !(c.callee() instanceof Op op)) continue;
            String name = switch (op.name()) {
                case "nn.conv2d" -> "conv2d#" + convs++;
                case "nn.dense" -> "dense#" + denses++;
                default -> null;
            };
            if (name == null) continue;
            matcher.match(c, name).ifPresent(m -> {
                regionEnds.put(m.output(), matches.size());
                matches.add(m);
            });
        }
        Expr body = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                Integer i = regionEnds.get(pre);
                if (i == null) return post;
                // the chain above the anchor is rebuilt only over its own nodes: walk it down to the anchor's input
                Expr anchor = post;
                for (int step = 1; step < matches.get(i).length(); step++) anchor = ((Call) anchor).args().get(0);
                return new Call(Op.get(OP), List.of(((Call) anchor).args().get(0)), Attrs.of("layer", AttrValue.of(i)));
            }
        }.rewrite(main.body());
        body = placeCopies(body);
        IRModule rewritten = module.withFunction(new GlobalVar("main"), new Function(main.params(), body, main.retType(), main.typeParams(),
                main.attrs(), main.span()));
        List<Function> references = new ArrayList<>();
        for (LayerMatcher.Match m : matches) references.add(region(m, types));
        return new Result(rewritten, matches.stream().map(LayerMatcher.Match::layer).toList(), references);
    }

    /**
     * Heterogeneous placement: {@code device_copy(x, src_device="cpu", dst_device="vta")} where a CPU value enters an
     * offloaded layer and {@code device_copy(y, src_device="vta", dst_device="cpu")} where a layer's result is read on
     * the CPU (an operator, or the function's result); one copy per value and direction, however many readers. A layer
     * that reads another layer's result reads it where it is: nothing is copied between them.
     */
    static Expr placeCopies(Expr body) {
        Map<Expr, Expr> toDevice = new IdentityHashMap<>(), toHost = new IdentityHashMap<>();
        Expr placed = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                if (!(post instanceof Call c) || !(c.callee() instanceof Op op)) return post;
                boolean offloaded = op.name().equals(OP);
                List<Expr> args = new ArrayList<>(c.args());
                boolean changed = false;
                for (int i = 0; i < args.size(); i++) {
                    Expr a = args.get(i);
                    Expr moved = offloaded ? (isLayer(a) ? a : toDevice.computeIfAbsent(a, x -> copy(x, HOST, ACCELERATOR)))
                            : isLayer(a) ? toHost.computeIfAbsent(a, x -> copy(x, ACCELERATOR, HOST)) : a;
                    changed |= moved != a;
                    args.set(i, moved);
                }
                return changed ? new Call(c.callee(), args, c.attrs(), c.typeArgs(), c.span()) : post;
            }
        }.rewrite(body);
        return isLayer(placed) ? toHost.computeIfAbsent(placed, x -> copy(x, ACCELERATOR, HOST)) : placed;
    }

    static boolean isLayer(Expr e) {
        return e instanceof Call c && c.callee() instanceof Op op && op.name().equals(OP);
    }

    private static Call copy(Expr x, String from, String to) {
        return new Call(Op.get(DEVICE_COPY), List.of(x), Attrs.of("src_device", AttrValue.of(from)).with("dst_device", AttrValue.of(to)));
    }

    /**
     * The matched region alone, over a fresh parameter in place of the anchor's input: every other operand of the
     * region's calls is a constant (the matcher only follows constant weights, biases and multipliers), so the function
     * is closed and the interpreter can run it on any input of the layer's type.
     */
    private static Function region(LayerMatcher.Match m, InferResult types) {
        List<Call> chain = new ArrayList<>(); // the region's calls from its output down to the anchor
        Expr e = m.output();
        for (int step = 0; step < m.length(); step++) {
            Call c = (Call) e;
            chain.add(c);
            e = c.args().get(0);
        }
        Var data = Var.fresh("data", types.typeOf(e));
        Expr rebuilt = data;
        for (int i = chain.size() - 1; i >= 0; i--) {
            Call c = chain.get(i);
            List<Expr> args = new ArrayList<>(c.args());
            args.set(0, rebuilt);
            rebuilt = new Call(c.callee(), args, c.attrs(), c.typeArgs(), c.span());
        }
        return new Function(List.of(data), rebuilt);
    }
}
