package dev.relayfarm.kernel.lower;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.compute.Conv2d;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.kernel.template.Conv2dInt8DotTemplate;
import dev.relayfarm.kernel.template.Conv2dNCHWOcVecTemplate;
import dev.relayfarm.kernel.template.Conv2dNCHWTemplate;
import dev.relayfarm.kernel.template.Conv2dNCHWcTemplate;
import dev.relayfarm.kernel.template.Conv2dWinogradNCHWcTemplate;
import dev.relayfarm.kernel.template.DenseNoPackTemplate;
import dev.relayfarm.kernel.template.DepthwiseConv2dNCHWcTemplate;
import dev.relayfarm.kernel.template.DensePackTemplate;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.Registers;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.kernel.template.ScheduleTemplate;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.nn.Conv2DNCHWc;
import dev.relayfarm.ops.nn.Dense;
import dev.relayfarm.ops.nn.WinogradConv2D;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.Optional;

/**
 * Anchor operators with a dedicated schedule template: the template builds the compute (its stage
 * and axis names are the ones its schedule addresses) for the call's shapes and attributes. An op
 * without one here (or with attributes its template does not cover, such as NHWC) is computed
 * like any other op and, when it reduces, scheduled by the generic reduction template. Depthwise
 * convolutions in a blocked layout have their own template; grouped ones whose groups split whole
 * channel blocks share the blocked template; the rest stay NCHW (alter-op-layout keeps them there)
 * and use the NCHW template; 8-bit ones (quantize-realize's) are dot products of unfolded rows
 * ({@link Conv2dInt8DotTemplate}). Winograd convolutions ({@code nn.contrib_conv2d_winograd_NCHWc}, blocked) have their own.
 */
final class Anchors {
    private Anchors() {}

    /**
     * The template for {@code op}, or empty when it has none for these attributes. {@code config},
     * when given, selects among alternative templates (dense: packed or in place; NCHW conv2d:
     * columns or channels as SIMD lanes; 8-bit: dot products or the NCHW template) by its template name.
     */
    static Optional<ScheduleTemplate> template(String op, java.util.List<Tensor> in, Attrs attrs, String name, Optional<ScheduleConfig> config, Registers registers) {
        return switch (op) {
            case "nn.conv2d" -> {
                Conv2D.Conv2DAttrs a = (Conv2D.Conv2DAttrs) OpRegistry.get(op).parseAttrs(attrs);
                // 8-bit data and int8 weights accumulating in int32 (quantize-realize's convolutions) take the dot-product
                // template where it is faster (Conv2dInt8DotTemplate.preferred), the others (grouped ones, depthwise, short
                // reductions) the NCHW template with the data widened once; other mixed dtypes take the generic compute
                boolean widening = a.outDtype() != null && !a.outDtype().equals(in.get(0).dtype());
                boolean int8 = widening && a.outDtype().equals(DType.INT32) && in.get(1).dtype().equals(DType.INT8)
                        && (in.get(0).dtype().equals(DType.INT8) || in.get(0).dtype().equals(DType.UINT8));
                if (!a.dataLayout().name().equals("NCHW") || !a.kernelLayout().name().equals("OIHW")
                        || !a.outLayout().name().equals("NCHW") || widening && !int8) {
                    yield Optional.empty();
                }
                Conv2d.Params p = params(a.strides(), a.padding(), a.dilation());
                String wl = ("nn.conv2d(data" + in.get(0).shape() + ",weight" + in.get(1).shape() + ",strides=" + a.strides()[0] + "x" + a.strides()[1]
                        + ",padding=" + a.padding()[0] + "," + a.padding()[1] + "," + a.padding()[2] + "," + a.padding()[3]
                        + ",dilation=" + a.dilation()[0] + "x" + a.dilation()[1] + (a.groups() == 1 ? "" : ",groups=" + a.groups())
                        + (int8 ? ",dtype=" + in.get(0).dtype() + "->int32" : "") + ")").replace(" ", "");
                boolean dot = int8 && Conv2dInt8DotTemplate.applies(in.get(0), in.get(1), a.groups());
                String which = config.map(ScheduleConfig::template)
                        .orElse(dot && Conv2dInt8DotTemplate.preferred(in.get(0), in.get(1)) ? Conv2dInt8DotTemplate.NAME : !int8 && a.groups() == 1 && smallInChannels(in.get(1).shape()) ? Conv2dNCHWOcVecTemplate.NAME : Conv2dNCHWTemplate.NAME);
                if (which.equals(Conv2dInt8DotTemplate.NAME)) {
                    if (!dot) throw new InvalidConfigException(Conv2dInt8DotTemplate.NAME + " covers ungrouped 8-bit convolutions only (" + wl + "); use " + Conv2dNCHWTemplate.NAME);
                    yield Optional.of(Conv2dInt8DotTemplate.create(in.get(0), in.get(1), p, name, wl));
                }
                if (int8 && !which.equals(Conv2dNCHWTemplate.NAME)) {
                    throw new InvalidConfigException(which + " does not cover int8 convolutions (" + wl + "); use " + Conv2dInt8DotTemplate.NAME + " or " + Conv2dNCHWTemplate.NAME);
                }
                if (which.equals(Conv2dNCHWOcVecTemplate.NAME)) {
                    if (a.groups() != 1) throw new InvalidConfigException(Conv2dNCHWOcVecTemplate.NAME + " does not cover grouped convolutions (" + wl + "); use " + Conv2dNCHWTemplate.NAME);
                    yield Optional.of(Conv2dNCHWOcVecTemplate.create(in.get(0), in.get(1), p, name, wl, config));
                }
                if (!which.equals(Conv2dNCHWTemplate.NAME)) {
                    throw new InvalidConfigException("config is for template " + which + ", but nn.conv2d has templates " + Conv2dNCHWTemplate.NAME + ", " + Conv2dNCHWOcVecTemplate.NAME
                            + " and " + Conv2dInt8DotTemplate.NAME);
                }
                Conv2d.Def def = Conv2d.compute(in.get(0), in.get(1), p, a.groups(), int8 ? a.outDtype() : null);
                Compute pad = def.pad() == null ? null : rename(def.pad(), name + "_pad", null, null);
                Compute out = rename(def.out(), name, def.pad(), pad);
                yield Optional.of(new Conv2dNCHWTemplate(new Conv2d.Def(pad, out, def.fb(), def.xb(), def.maxColumns()), in.get(1).shape().get(3), wl));
            }
            case "nn.contrib_conv2d_NCHWc" -> {
                Conv2DNCHWc.Conv2DNCHWcAttrs a = (Conv2DNCHWc.Conv2DNCHWcAttrs) OpRegistry.get(op).parseAttrs(attrs);
                int ic = in.get(0).shape().get(4), oc = in.get(1).shape().get(5);
                if (DepthwiseConv2dNCHWcTemplate.covers(in.get(0).shape(), in.get(1).shape(), in.get(0).dtype(), a)) yield Optional.of(DepthwiseConv2dNCHWcTemplate.create(in.get(0), in.get(1), params(a.strides(), a.padding(), a.dilation()), name, registers));
                boolean blocked = Conv2dNCHWcTemplate.applies(in.get(0).shape(), in.get(1).shape(), a.groups())
                        && a.dataLayout().name().equals("NCHW" + ic + "c") && a.kernelLayout().name().equals("OIHW" + ic + "i" + oc + "o")
                        && a.outLayout().name().equals("NCHW" + oc + "c") && (a.outDtype() == null || a.outDtype().equals(in.get(0).dtype()));
                if (!blocked) yield Optional.empty();
                yield Optional.of(Conv2dNCHWcTemplate.create(in.get(0), in.get(1), params(a.strides(), a.padding(), a.dilation()), a.groups(), name));
            }
            case "nn.contrib_conv2d_winograd_NCHWc" -> {
                WinogradConv2D.WinogradAttrs a = (WinogradConv2D.WinogradAttrs) OpRegistry.get(op).parseAttrs(attrs);
                if (in.get(0).rank() != 5 || in.get(1).rank() != 6 || !Conv2dWinogradNCHWcTemplate.applies(in.get(0).shape(), in.get(1).shape(), a.tileSize())) yield Optional.empty();
                int ic = in.get(0).shape().get(4), oc = in.get(1).shape().get(5);
                boolean blocked = a.dataLayout().name().equals("NCHW" + ic + "c") && a.outLayout().name().equals("NCHW" + oc + "c")
                        && (a.outDtype() == null || a.outDtype().equals(in.get(0).dtype())) && in.get(0).dtype().isFloat();
                yield blocked ? Optional.of(Conv2dWinogradNCHWcTemplate.create(in.get(0), in.get(1), a.tileSize(), a.padding(), name)) : Optional.empty();
            }
            case "nn.dense" -> {
                if (in.get(0).rank() != 2 || in.get(1).rank() != 2) yield Optional.empty();
                // Both templates accumulate in the data's dtype: an int8 x int8 -> int32 product (out_dtype) takes the
                // generic compute, which casts its operands to the output dtype, as conv2d does above.
                Dense.DenseAttrs da = (Dense.DenseAttrs) OpRegistry.get(op).parseAttrs(attrs);
                if (da.outDtype() != null && !da.outDtype().equals(in.get(0).dtype()) || !in.get(1).dtype().equals(in.get(0).dtype())) yield Optional.empty();
                String which = config.map(ScheduleConfig::template).orElse(in.get(0).shape().get(0) <= 4 ? DenseNoPackTemplate.NAME : DensePackTemplate.NAME);
                yield Optional.of(switch (which) {
                    case DenseNoPackTemplate.NAME -> DenseNoPackTemplate.create(in.get(0), in.get(1), name, config);
                    case DensePackTemplate.NAME -> DensePackTemplate.create(in.get(0), in.get(1), name, config);
                    default -> throw new InvalidConfigException("config is for template " + which + ", but nn.dense has templates "
                            + DensePackTemplate.NAME + " and " + DenseNoPackTemplate.NAME);
                });
            }
            default -> Optional.empty();
        };
    }

    /**
     * A convolution alter-op-layout left in NCHW because it has few input channels (the first layer):
     * vectorized along output channels, its weights packed per call, which is cheap when they are few.
     */
    private static boolean smallInChannels(java.util.List<Integer> weight) {
        return Conv2dNCHWOcVecTemplate.applies(weight) && weight.get(1) < 8 && (long) weight.get(0) * weight.get(1) * weight.get(2) * weight.get(3) <= 32768;
    }

    private static Conv2d.Params params(int[] strides, int[] padding, int[] dilation) {
        return new Conv2d.Params(strides[0], strides[1], padding[0], padding[1], padding[2], padding[3], dilation[0], dilation[1]);
    }

    /** {@code c} under a new name, its reads of {@code from} redirected to {@code to}. */
    private static Compute rename(Compute c, String name, Compute from, Compute to) {
        dev.relayfarm.kernel.expr.PrimExpr body = from == null ? c.body() : dev.relayfarm.kernel.expr.PrimExprs.map(c.body(),
                e -> e instanceof dev.relayfarm.kernel.expr.TensorLoad tl && tl.tensor().id() == from.id() ? new dev.relayfarm.kernel.expr.TensorLoad(to, tl.indices()) : e);
        return new Compute(name, c.axes(), body, c.id());
    }
}
