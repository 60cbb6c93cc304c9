package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.interp.ClosureValue;
import dev.relayfarm.interp.ConstructorValue;
import dev.relayfarm.interp.FunctionRefValue;
import dev.relayfarm.interp.RefValue;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayDeque;

/** Compares a VM result with the interpreter's value of the same program: tensors by content, ADT values by tag and fields, tuples as tag 0. */
final class VmValues {
    private VmValues() {}

    record Pair(Value want, VmObject got, String path) {}

    /** Iterative, so a list of 100,000 elements compares without a deep Java stack. */
    static void assertSame(Value want, VmObject got) {
        ArrayDeque<Pair> todo = new ArrayDeque<>();
        todo.push(new Pair(want, got, "result"));
        while (!todo.isEmpty()) {
            Pair p = todo.pop();
            switch (p.want()) {
                case TensorValue t -> {
                    VmObject.Tensor g = assertInstanceOf(VmObject.Tensor.class, p.got(), p.path());
                    NDArray a = g.toNDArray();
                    assertEquals(t.data().dtype(), a.dtype(), p.path());
                    assertArrayEquals(t.data().shape(), a.shape(), p.path());
                    for (int i = 0; i < a.elementCount(); i++) {
                        assertEquals(t.data().getDouble(i), a.getDouble(i), 1e-4 * Math.max(1, Math.abs(t.data().getDouble(i))), p.path() + "[" + i + "]");
                    }
                }
                case TupleValue t -> {
                    VmObject.Adt g = assertInstanceOf(VmObject.Adt.class, p.got(), p.path());
                    assertEquals(0, g.tag(), p.path());
                    assertEquals(t.fields().size(), g.fields().size(), p.path());
                    for (int i = 0; i < t.fields().size(); i++) todo.push(new Pair(t.fields().get(i), g.fields().get(i), p.path() + "." + i));
                }
                case ConstructorValue c -> {
                    VmObject.Adt g = assertInstanceOf(VmObject.Adt.class, p.got(), p.path());
                    assertEquals(c.constructor().tag(), g.tag(), p.path() + ": expected " + c.constructor().name());
                    assertEquals(c.fields().size(), g.fields().size(), p.path());
                    for (int i = 0; i < c.fields().size(); i++) todo.push(new Pair(c.fields().get(i), g.fields().get(i), p.path() + "/" + c.constructor().name() + "." + i));
                }
                case ClosureValue _, FunctionRefValue _ -> assertInstanceOf(VmObject.Closure.class, p.got(), p.path());
                case RefValue _ -> fail(p.path() + ": references are not compiled by the VM");
            }
        }
    }
}
