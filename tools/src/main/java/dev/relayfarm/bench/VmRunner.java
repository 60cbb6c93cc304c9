package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.vm.VirtualMachine;
import dev.relayfarm.vm.VmObject;
import java.util.ArrayList;
import java.util.List;

/**
 * A VM artifact (control flow, dynamic shapes) through the Java VM loop and its native kernels, with a fixed thread
 * count. Its result's tensors come out depth-first (tuple fields in order), as the ONNX model's outputs are ordered.
 */
public final class VmRunner implements ModelRunner {
    private final VirtualMachine vm;
    private final String name;

    /** Owns {@code vm}: closing the runner closes it. */
    public VmRunner(VirtualMachine vm, int threads, String name) {
        this.vm = vm;
        this.name = name;
        vm.setNumThreads(threads);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<NDArray> run(List<NDArray> inputs) {
        List<NDArray> out = new ArrayList<>();
        flatten(vm.run("main", inputs), out);
        return out;
    }

    private static void flatten(VmObject v, List<NDArray> out) {
        switch (v) {
            case VmObject.Tensor t -> out.add(t.toNDArray());
            case VmObject.Adt a -> a.fields().forEach(f -> flatten(f, out));
            default -> throw new IllegalStateException("the model returned " + v + ", not tensors and tuples of tensors");
        }
    }

    @Override
    public void close() {
        vm.close();
    }
}
