package dev.relayfarm.kernel.te;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.PrimExprs;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.TensorLoad;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code name[axes...] = body}: one element per point of the data-parallel axes. The body is either
 * a reduction-free expression or a single {@link Reduce} at the top (the TVM rule: a reduction is a
 * whole stage, so it gets one init and one update).
 */
public record Compute(String name, List<IterVar> axes, PrimExpr body, long id) implements Tensor {
    public Compute {
        axes = List.copyOf(axes);
        for (IterVar a : axes) {
            if (a.kind() != IterVar.Kind.DATA_PAR) throw new IllegalArgumentException("compute " + name + ": axis " + a.name() + " must be data-parallel");
        }
        PrimExpr inner = body instanceof Reduce r ? r.source() : body;
        PrimExprs.forEach(inner, e -> {
            if (e instanceof Reduce) throw new IllegalArgumentException("compute " + name + ": a reduction must be the whole body, not nested in it");
        });
    }

    @Override
    public List<Integer> shape() {
        return axes.stream().map(IterVar::extent).toList();
    }

    @Override
    public DType dtype() {
        return body.dtype();
    }

    public boolean isReduction() {
        return body instanceof Reduce;
    }

    public List<IterVar> reduceAxes() {
        return body instanceof Reduce r ? r.axes() : List.of();
    }

    /** The tensors this compute reads, each once, in first-use order. */
    public List<Tensor> inputs() {
        Map<Long, Tensor> seen = new LinkedHashMap<>();
        PrimExprs.forEach(body, e -> {
            if (e instanceof TensorLoad l && l.tensor() instanceof Tensor t) seen.putIfAbsent(t.id(), t);
        });
        return new ArrayList<>(seen.values());
    }
}
