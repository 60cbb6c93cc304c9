package dev.relayfarm.vta.compile;

/**
 * The shape of one offloaded layer as a 2-D convolution of a single image (NCHW, groups=1). A dense layer
 * {@code [N, K] × [M, K]ᵀ} is the 1×1 convolution of a K-channel image N pixels high and 1 wide
 * ({@link #dense}), so both share one lowering.
 */
public record ConvGeometry(int channelsIn, int height, int width, int channelsOut, int kernelH, int kernelW, int strideH, int strideW,
        int padTop, int padLeft, int padBottom, int padRight) {
    public ConvGeometry {
        if (channelsIn < 1 || height < 1 || width < 1 || channelsOut < 1 || kernelH < 1 || kernelW < 1 || strideH < 1 || strideW < 1) {
            throw new IllegalArgumentException("layer sizes and strides must be >= 1: " + this);
        }
        if (padTop < 0 || padLeft < 0 || padBottom < 0 || padRight < 0) {
            throw new IllegalArgumentException("padding must be >= 0: " + this);
        }
        // the record's fields are not assigned yet inside the compact constructor: use the parameters
        if (height + padTop + padBottom < kernelH || width + padLeft + padRight < kernelW) {
            throw new IllegalArgumentException("the kernel does not fit the padded input: " + this);
        }
    }

    public static ConvGeometry dense(int rows, int channelsIn, int channelsOut) {
        return new ConvGeometry(channelsIn, rows, 1, channelsOut, 1, 1, 1, 1, 0, 0, 0, 0);
    }

    public int outHeight() {
        return (height + padTop + padBottom - kernelH) / strideH + 1;
    }

    public int outWidth() {
        return (width + padLeft + padRight - kernelW) / strideW + 1;
    }

    /** Multiply-accumulates the layer needs, without the zero padding of channels to blocks. */
    public long macs() {
        return (long) outHeight() * outWidth() * channelsOut * channelsIn * kernelH * kernelW;
    }

    @Override
    public String toString() {
        return channelsIn + "→" + channelsOut + " " + height + "×" + width + " k" + kernelH + "×" + kernelW + " s" + strideH
                + (strideW != strideH ? "×" + strideW : "") + " p" + padTop + "," + padLeft + "," + padBottom + "," + padRight;
    }
}
