package dev.relayfarm.ops.nn;

/**
 * Fast float32 NCHW/OIHW convolution loops. Three strategies, chosen by shape:
 * <ul>
 *   <li>1×1, stride 1, no padding: the input channel planes already are the GEMM's B matrix;</li>
 *   <li>depthwise (one input channel per group): a direct loop per output channel whose inner loop
 *       runs over contiguous output pixels — im2col would build a matrix with a single GEMM row;</li>
 *   <li>everything else: im2col into a (C/g·kh·kw) × (OH·OW) matrix, then {@link Gemm}.</li>
 * </ul>
 */
public final class ConvKernels {
    private ConvKernels() {}

    public static float[] conv2d(float[] x, float[] w, ConvGeometry g) {
        float[] out = new float[g.n() * g.o() * g.oh() * g.ow()];
        if (out.length == 0) return out;
        if (g.cg() == 1 && g.groups() > 1) {
            depthwise(x, w, out, g);
            return out;
        }
        int cg = g.cg(), og = g.og(), pix = g.oh() * g.ow(), kdim = cg * g.kh() * g.kw();
        boolean pointwise = g.kh() == 1 && g.kw() == 1 && g.sh() == 1 && g.sw() == 1
                && g.pt() == 0 && g.pl() == 0 && g.pb() == 0 && g.pr() == 0;
        float[] col = pointwise ? null : new float[kdim * pix];
        for (int n = 0; n < g.n(); n++) {
            for (int gr = 0; gr < g.groups(); gr++) {
                int xOff = (n * g.c() + gr * cg) * g.h() * g.w();
                float[] bMat;
                int bOff;
                if (pointwise) {
                    bMat = x;
                    bOff = xOff;
                } else {
                    im2col(x, xOff, col, g);
                    bMat = col;
                    bOff = 0;
                }
                Gemm.sgemm(og, pix, kdim, w, gr * og * kdim, kdim, false, bMat, bOff, pix, false,
                        out, (n * g.o() + gr * og) * pix, pix);
            }
        }
        return out;
    }

    /** Rows (c, r, s) of the column matrix, each holding the input pixel every output pixel reads (0 in padding). */
    static void im2col(float[] x, int xOff, float[] col, ConvGeometry g) {
        int kh = g.kh(), kw = g.kw(), oh = g.oh(), ow = g.ow(), h = g.h(), w = g.w();
        int rows = g.cg() * kh * kw;
        Parallel.forEach(rows, (long) rows * oh * ow, row -> {
            int c = row / (kh * kw), r = (row / kw) % kh, s = row % kw;
            int base = row * oh * ow;
            int xc = xOff + c * h * w;
            int colShift = s * g.dw() - g.pl();
            // Output columns whose input column lies inside the image: lo <= ow < hi.
            int lo = Math.max(0, ceilDiv(-colShift, g.sw()));
            int hi = Math.min(ow, ceilDiv(w - colShift, g.sw()));
            for (int y = 0; y < oh; y++) {
                int ih = y * g.sh() - g.pt() + r * g.dh();
                int o = base + y * ow;
                if (ih < 0 || ih >= h || lo >= hi) {
                    java.util.Arrays.fill(col, o, o + ow, 0f);
                    continue;
                }
                java.util.Arrays.fill(col, o, o + lo, 0f);
                java.util.Arrays.fill(col, o + hi, o + ow, 0f);
                int src = xc + ih * w + colShift;
                if (g.sw() == 1) {
                    System.arraycopy(x, src + lo, col, o + lo, hi - lo);
                } else {
                    int sw = g.sw();
                    for (int xx = lo; xx < hi; xx++) col[o + xx] = x[src + xx * sw];
                }
            }
        });
    }

    static int ceilDiv(int a, int b) {
        return -Math.floorDiv(-a, b);
    }

    /** Output channel oc reads input channel oc / multiplier only. */
    static void depthwise(float[] x, float[] w, float[] out, ConvGeometry g) {
        int mult = g.og(), kh = g.kh(), kw = g.kw(), oh = g.oh(), ow = g.ow(), h = g.h(), wd = g.w();
        int planes = g.n() * g.o();
        Parallel.forEach(planes, (long) planes * oh * ow * kh * kw, p -> {
            int n = p / g.o(), oc = p % g.o();
            int xc = (n * g.c() + oc / mult) * h * wd;
            int o0 = p * oh * ow;
            for (int r = 0; r < kh; r++) {
                for (int s = 0; s < kw; s++) {
                    float wv = w[(oc * kh + r) * kw + s];
                    int colShift = s * g.dw() - g.pl();
                    int lo = Math.max(0, ceilDiv(-colShift, g.sw()));
                    int hi = Math.min(ow, ceilDiv(wd - colShift, g.sw()));
                    for (int y = 0; y < oh; y++) {
                        int ih = y * g.sh() - g.pt() + r * g.dh();
                        if (ih < 0 || ih >= h) continue;
                        int src = xc + ih * wd + colShift;
                        int o = o0 + y * ow;
                        if (g.sw() == 1) {
                            for (int xx = lo; xx < hi; xx++) out[o + xx] += wv * x[src + xx];
                        } else {
                            int sw = g.sw();
                            for (int xx = lo; xx < hi; xx++) out[o + xx] += wv * x[src + xx * sw];
                        }
                    }
                }
            }
        });
    }

    /** Any dtype, computed in double: the straightforward loop nest (non-float32 inputs are rare and small). */
    public static double[] conv2dGeneric(double[] x, double[] w, ConvGeometry g) {
        double[] out = new double[g.n() * g.o() * g.oh() * g.ow()];
        int cg = g.cg(), og = g.og();
        for (int n = 0; n < g.n(); n++) {
            for (int oc = 0; oc < g.o(); oc++) {
                int gr = oc / og;
                for (int y = 0; y < g.oh(); y++) {
                    for (int xx = 0; xx < g.ow(); xx++) {
                        double acc = 0;
                        for (int ic = 0; ic < cg; ic++) {
                            int c = gr * cg + ic;
                            for (int r = 0; r < g.kh(); r++) {
                                int ih = y * g.sh() - g.pt() + r * g.dh();
                                if (ih < 0 || ih >= g.h()) continue;
                                for (int s = 0; s < g.kw(); s++) {
                                    int iw = xx * g.sw() - g.pl() + s * g.dw();
                                    if (iw < 0 || iw >= g.w()) continue;
                                    acc += x[((n * g.c() + c) * g.h() + ih) * g.w() + iw] * w[((oc * cg + ic) * g.kh() + r) * g.kw() + s];
                                }
                            }
                        }
                        out[((n * g.o() + oc) * g.oh() + y) * g.ow() + xx] = acc;
                    }
                }
            }
        }
        return out;
    }
}
