package dev.relayfarm.ops.nn;

/**
 * The sizes of one NCHW/OIHW convolution, resolved from the run-time shapes. {@code pad} is
 * {top, left, bottom, right}. Output size follows TVM:
 * {@code (H + top + bottom - dilation * (kh - 1) - 1) / stride + 1}.
 */
public record ConvGeometry(int n, int c, int h, int w, int o, int kh, int kw,
                           int sh, int sw, int pt, int pl, int pb, int pr, int dh, int dw, int groups,
                           int oh, int ow) {

    public static ConvGeometry of(int[] xShape, int[] wShape, int[] strides, int[] pad, int[] dilation, int groups) {
        int h = xShape[2], w = xShape[3], kh = wShape[2], kw = wShape[3];
        int oh = (h + pad[0] + pad[2] - dilation[0] * (kh - 1) - 1) / strides[0] + 1;
        int ow = (w + pad[1] + pad[3] - dilation[1] * (kw - 1) - 1) / strides[1] + 1;
        return new ConvGeometry(xShape[0], xShape[1], h, w, wShape[0], kh, kw, strides[0], strides[1],
                pad[0], pad[1], pad[2], pad[3], dilation[0], dilation[1], groups, Math.max(oh, 0), Math.max(ow, 0));
    }

    /** Input channels per group. */
    public int cg() {
        return c / groups;
    }

    /** Output channels per group. */
    public int og() {
        return o / groups;
    }

    public long macs() {
        return (long) n * o * oh * ow * cg() * kh * kw;
    }
}
