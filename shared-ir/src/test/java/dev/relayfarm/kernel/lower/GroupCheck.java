package dev.relayfarm.kernel.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.runtime.NativeKernel;
import dev.relayfarm.types.OpResolver;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/** Runs a Primitive function through the interpreter and its compiled kernel on the same random inputs. */
final class GroupCheck {
    private GroupCheck() {}

    /** Random inputs for the function's parameters, one value per parameter (tuples as tuples). */
    static List<Value> randomArgs(Function fn, long seed) {
        Random rnd = new Random(seed);
        Function typed = TypeInference.inferExpr(fn, OpResolver.REGISTRY).module().main().orElseThrow();
        List<Value> args = new ArrayList<>();
        for (var p : typed.params()) args.add(random(p.annotation(), rnd));
        return args;
    }

    private static Value random(Type t, Random rnd) {
        return switch (t) {
            case TensorType tt -> {
                int[] shape = tt.shape().stream().mapToInt(d -> (int) ((Dim.Int) d).value()).toArray();
                double[] v = new double[NDArray.elementCount(tt.dtype(), shape)];
                // 8-bit integers (quantized data and weights) over their whole range; others in [-1, 1) (wider integers
                // become 0 there, which keeps index inputs such as gather's in bounds)
                boolean byte8 = tt.dtype().equals(DType.UINT8) || tt.dtype().equals(DType.INT8);
                for (int i = 0; i < v.length; i++) {
                    v[i] = !byte8 ? rnd.nextDouble() * 2 - 1 : tt.dtype().equals(DType.UINT8) ? rnd.nextInt(256) : rnd.nextInt(256) - 128;
                }
                yield new TensorValue(NDArray.fromDoubles(tt.dtype(), shape, v));
            }
            case TupleType tup -> new TupleValue(tup.fields().stream().map(f -> random(f, rnd)).toList());
            default -> throw new IllegalArgumentException("no random value of type " + t);
        };
    }

    static List<NDArray> flatten(Value v) {
        List<NDArray> out = new ArrayList<>();
        ArrayDeque<Value> todo = new ArrayDeque<>(List.of(v));
        while (!todo.isEmpty()) {
            switch (todo.pop()) {
                case TensorValue t -> out.add(t.data());
                case TupleValue t -> {
                    for (int i = t.fields().size() - 1; i >= 0; i--) todo.push(t.fields().get(i));
                }
                default -> throw new IllegalArgumentException("not a tensor or tuple: " + v);
            }
        }
        return out;
    }

    /** Asserts the kernel computes what the interpreter computes for {@code fn} on random inputs. */
    static void assertMatches(String label, Function fn, NativeKernel k, long seed) {
        List<Value> args = randomArgs(fn, seed);
        List<NDArray> expected = flatten(Interpreter.run(IRModule.fromMain(fn), "main", args));
        List<NDArray> in = new ArrayList<>();
        for (Value a : args) in.addAll(flatten(a));
        List<NDArray> actual = k.run(in);
        assertEquals(expected.size(), actual.size(), label + ": number of outputs");
        for (int o = 0; o < expected.size(); o++) {
            NDArray e = expected.get(o), a = actual.get(o);
            assertEquals(Arrays.toString(e.shape()), Arrays.toString(a.shape()), label + ": shape of output " + o);
            for (int i = 0; i < e.elementCount(); i++) {
                double ev = e.getDouble(i), av = a.getDouble(i);
                if (!(Math.abs(ev - av) <= 1e-4 + 1e-4 * Math.abs(ev))) {
                    fail(label + ": output " + o + " element " + i + " is " + av + ", the interpreter says " + ev);
                }
            }
        }
    }
}
