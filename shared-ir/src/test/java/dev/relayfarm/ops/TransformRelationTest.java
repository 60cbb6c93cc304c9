package dev.relayfarm.ops;

import static dev.relayfarm.ops.RelationAssert.defers;
import static dev.relayfarm.ops.RelationAssert.infers;
import static dev.relayfarm.ops.RelationAssert.rejects;

import org.junit.jupiter.api.Test;

/** Type relations of the transform operators: good inputs (static, symbolic, Any), deferral, errors. */
class TransformRelationTest {
    private static final String F = "Tensor[(2, 3), float32]";

    @Test
    void reshape() {
        infers("reshape", "newshape=[3, 2]", "Tensor[(3, 2), float32]", F);
        infers("reshape", "newshape=[-1]", "Tensor[(6), float32]", F);
        infers("reshape", "newshape=[0, -1]", "Tensor[(2, 12), float32]", "Tensor[(2, 3, 4), float32]");
        infers("reshape", "newshape=[-1, 4]", "Tensor[(3 * n, 4), float32]", "Tensor[(n, 3, 4), float32]");
        infers("reshape", "newshape=[0, -1]", "Tensor[(n, 12), float32]", "Tensor[(n, 3, 4), float32]");
        infers("reshape", "newshape=[-1, 12]", "Tensor[(?, 12), float32]", "Tensor[(?, 3, 4), float32]");
        infers("reshape", "newshape=[0, 0, -1]", "Tensor[(?, 3, 4), float32]", "Tensor[(?, 3, 4), float32]");
        infers("reshape", "newshape=[-2]", "Tensor[(n, 3, 4), float32]", "Tensor[(n, 3, 4), float32]");
        infers("reshape", "newshape=[-3, 4]", "Tensor[(3 * n, 4), float32]", "Tensor[(n, 3, 4), float32]");
        infers("reshape", "newshape=[-4, 2, -1, -2]", "Tensor[(2, 3, 5, 7), int8]", "Tensor[(6, 5, 7), int8]");
        infers("reshape", "newshape=[0, 2], allowzero=True", "Tensor[(0, 2), float32]", "Tensor[(0, 4), float32]");
        infers("reshape", "newshape=[]", "float32", "Tensor[(1, 1), float32]");
        defers("reshape", "newshape=[-1]", "_");
        rejects("reshape", "newshape=[4, -1]", "reshape: cannot reshape (2, 3) (6 elements) into (4, -1)", F);
        rejects("reshape", "newshape=[4, 2]", "reshape: cannot reshape (2, 3) (6 elements) into (4, 2)", F);
        rejects("reshape", "newshape=[-1, -1]", "reshape: cannot reshape (2, 3) (6 elements) into (-1, -1): only one -1 is allowed", F);
        rejects("reshape", "newshape=[0, 0, 0]",
                "reshape: cannot reshape (2, 3) (6 elements) into (0, 0, 0): 0 at position 2 copies input dim 2 but the input has rank 2", F);
        rejects("reshape", "newshape=[-4, 4, -1]", "reshape: cannot reshape (2, 3) (6 elements) into (-4, 4, -1)", F);
        rejects("reshape", "newshape=[2, 3], shape=[1]", "reshape: unknown attribute 'shape'", F);
        rejects("reshape", "", "reshape: attribute 'newshape' is required", F);
        rejects("reshape", "newshape=[-1]", "reshape: data must be a tensor, got (float32,)", "(float32,)");
    }

    @Test
    void transpose() {
        infers("transpose", "", "Tensor[(4, 3, n), float32]", "Tensor[(n, 3, 4), float32]");
        infers("transpose", "axes=None", "Tensor[(3, 2), float32]", F);
        infers("transpose", "axes=[2, 0, 1]", "Tensor[(4, n, ?), float32]", "Tensor[(n, ?, 4), float32]");
        infers("transpose", "axes=[-1, 0, -2]", "Tensor[(4, n, ?), float32]", "Tensor[(n, ?, 4), float32]");
        defers("transpose", "", "_");
        rejects("transpose", "axes=[0, 1]", "transpose: axes [0, 1] has 2 entries but the input has rank 3", "Tensor[(1, 2, 3), float32]");
        rejects("transpose", "axes=[0, 0]", "transpose: axes [0, 0] name axis 0 twice (must be a permutation)", F);
        rejects("transpose", "axes=[0, 2]", "transpose: axis 2 is out of range for rank 2 (must be in [-2, 1])", F);
    }

    @Test
    void concatenate() {
        infers("concatenate", "axis=1", "Tensor[(2, 8), float32]", "(Tensor[(2, 3), float32], Tensor[(2, 5), float32])");
        infers("concatenate", "", "Tensor[(5, 3), float32]", "(Tensor[(2, 3), float32], Tensor[(3, 3), float32])");
        infers("concatenate", "axis=-1", "Tensor[(n, m + 3), float32]", "(Tensor[(n, m), float32], Tensor[(n, 3), float32])");
        infers("concatenate", "axis=0", "Tensor[(2 * n, 4), float32]", "(Tensor[(n, 4), float32], Tensor[(n, 4), float32])");
        infers("concatenate", "axis=0", "Tensor[(?, 4), float32]", "(Tensor[(?, ?), float32], Tensor[(2, 4), float32])");
        infers("concatenate", "", "Tensor[(2), float32]", "(Tensor[(2), float32],)");
        defers("concatenate", "", "_");
        defers("concatenate", "", "(Tensor[(2), float32], _)");
        rejects("concatenate", "axis=3", "concatenate: axis 3 is out of range for rank 2 (must be in [-2, 1])",
                "(Tensor[(2, 3), float32], Tensor[(2, 3), float32])");
        rejects("concatenate", "axis=1", "concatenate: input 1 has shape (2, 5) but input 0 has (3, 4): dims other than axis 1 must match",
                "(Tensor[(3, 4), float32], Tensor[(2, 5), float32])");
        rejects("concatenate", "axis=1", "concatenate: input 2 has shape (4, 1) but input 1 has (3, 1): dims other than axis 1 must match",
                "(Tensor[(?, 4), float32], Tensor[(3, 1), float32], Tensor[(4, 1), float32])");
        rejects("concatenate", "", "concatenate: input 1 has dtype int32 but input 0 has float32",
                "(Tensor[(3), float32], Tensor[(3), int32])");
        rejects("concatenate", "", "concatenate: input 1 has rank 1 but input 0 has rank 2", "(Tensor[(3, 1), float32], Tensor[(3), float32])");
        rejects("concatenate", "", "concatenate: needs at least one input, got an empty tuple", "()");
        rejects("concatenate", "", "concatenate: data must be a tuple of tensors, got Tensor[(3), float32]", "Tensor[(3), float32]");
    }

    @Test
    void squeeze() {
        infers("squeeze", "", "Tensor[(3, n, ?), float32]", "Tensor[(1, 3, n, 1, ?), float32]");
        infers("squeeze", "axis=[0, -2]", "Tensor[(3, n, ?), float32]", "Tensor[(1, 3, n, 1, ?), float32]");
        infers("squeeze", "axis=[1]", "Tensor[(2), float32]", "Tensor[(2, ?), float32]");
        infers("squeeze", "axis=[]", F, F);
        defers("squeeze", "", "_");
        rejects("squeeze", "axis=[1]", "squeeze: axis 1 of shape (2, 3) has size 3, must be 1", F);
        rejects("squeeze", "axis=[2]", "squeeze: axis 2 is out of range for rank 2 (must be in [-2, 1])", F);
    }

    @Test
    void expandDims() {
        infers("expand_dims", "axis=0", "Tensor[(1, 2, 3), float32]", F);
        infers("expand_dims", "axis=-1", "Tensor[(n, 3, 1), float32]", "Tensor[(n, 3), float32]");
        infers("expand_dims", "axis=1, num_newaxis=2", "Tensor[(?, 1, 1, 3), float32]", "Tensor[(?, 3), float32]");
        infers("expand_dims", "axis=0, num_newaxis=0", F, F);
        infers("expand_dims", "axis=0", "Tensor[(1), int64]", "int64");
        defers("expand_dims", "axis=0", "_");
        rejects("expand_dims", "axis=3", "expand_dims: axis 3 is out of range for rank 3 (must be in [-3, 2])", F);
        rejects("expand_dims", "axis=0, num_newaxis=-1", "expand_dims: num_newaxis must be >= 0, got -1", F);
        rejects("expand_dims", "", "expand_dims: attribute 'axis' is required", F);
    }

    @Test
    void stridedSlice() {
        String x = "Tensor[(4, 5, 6), float32]";
        infers("strided_slice", "begin=[1, 0], end=[3, 5]", "Tensor[(2, 5, 6), float32]", x);
        infers("strided_slice", "begin=[0, 0, 0], end=[4, 5, 6], strides=[2, 2, 4]", "Tensor[(2, 3, 2), float32]", x);
        infers("strided_slice", "begin=[-1], end=[-5], strides=[-1]", "Tensor[(4, 5, 6), float32]", x);
        infers("strided_slice", "begin=[-2, 10], end=[100, -100], strides=[1, -1]", "Tensor[(2, 5, 6), float32]", x);
        infers("strided_slice", "begin=[3], end=[1]", "Tensor[(0, 5, 6), float32]", x);
        infers("strided_slice", "begin=[1], end=[4], axes=[2]", "Tensor[(4, 5, 3), float32]", x);
        infers("strided_slice", "begin=[1, 0], end=[2, -1], slice_mode=\"size\"", "Tensor[(2, 5, 6), float32]", x);
        infers("strided_slice", "begin=[0, 1], end=[2147483647, 3]", "Tensor[(n, 2), float32]", "Tensor[(n, 6), float32]");
        infers("strided_slice", "begin=[1, 1], end=[3, 3]", "Tensor[(?, 2), float32]", "Tensor[(n, 6), float32]");
        infers("strided_slice", "begin=[0, 0], end=[-1, 1], slice_mode=\"size\"", "Tensor[(?, 1), float32]", "Tensor[(?, 6), float32]");
        defers("strided_slice", "begin=[0], end=[1]", "_");
        rejects("strided_slice", "begin=[0], end=[1], strides=[0]", "strided_slice: stride 0 must not be 0, got strides [0]", x);
        rejects("strided_slice", "begin=[0, 0, 0, 0], end=[1, 1, 1, 1]",
                "strided_slice: begin [0, 0, 0, 0] and end [1, 1, 1, 1] have 4 entries but the input has rank 3", x);
        rejects("strided_slice", "begin=[0], end=[1], axes=[3]", "strided_slice: axis 3 is out of range for rank 3 (must be in [-3, 2])", x);
        rejects("strided_slice", "begin=[0], end=[1, 2], axes=[0]",
                "strided_slice: with axes [0], begin [0] and end [1, 2] must have one entry per axis", x);
        rejects("strided_slice", "begin=[0], end=[1], slice_mode=\"stop\"", "strided_slice: slice_mode must be \"end\" or \"size\", got \"stop\"", x);
        rejects("strided_slice", "begin=[0]", "strided_slice: attribute 'end' is required", x);
    }

    @Test
    void take() {
        String d = "Tensor[(4, 5, 6), float32]";
        infers("take", "", "Tensor[(2, 3), float32]", d, "Tensor[(2, 3), int32]");
        infers("take", "axis=1", "Tensor[(4, 2, 3, 6), float32]", d, "Tensor[(2, 3), int64]");
        infers("take", "axis=-1", "Tensor[(4, 5), float32]", d, "int32");
        infers("take", "axis=0, mode=\"wrap\"", "Tensor[(n, ?, 6), float32]", "Tensor[(?, ?, 6), float32]", "Tensor[(n), int32]");
        infers("take", "axis=1, batch_dims=1", "Tensor[(4, 7, 6), float32]", d, "Tensor[(4, 7), int32]");
        defers("take", "axis=0", d, "_");
        defers("take", "axis=0", "_", "int32");
        rejects("take", "axis=0", "take: indices must have an integer dtype, got float32", d, "Tensor[(2), float32]");
        rejects("take", "axis=3", "take: axis 3 is out of range for rank 3 (must be in [-3, 2])", d, "int32");
        rejects("take", "axis=0, mode=\"raise\"", "take: mode must be \"clip\", \"wrap\" or \"fast\", got \"raise\"", d, "int32");
        rejects("take", "axis=1, batch_dims=1", "take: with batch_dims 1, data (4, 5, 6) and indices (3, 7) must agree on the first 1 dims",
                d, "Tensor[(3, 7), int32]");
        rejects("take", "axis=0, batch_dims=1", "take: batch_dims 1 must be in [0, min(axis 0, indices rank 1)]", d, "Tensor[(4), int32]");
    }

    @Test
    void fill() {
        infers("zeros", "shape=[2, 3], dtype=\"float32\"", F);
        infers("zeros", "shape=[2, 3]", F);
        infers("ones", "shape=[], dtype=\"int64\"", "int64");
        infers("full", "shape=[2, 3], dtype=\"int32\"", "Tensor[(2, 3), int32]", "float32");
        infers("full", "shape=[4]", "Tensor[(4), float64]", "float64");
        infers("zeros_like", "", "Tensor[(n, ?), int8]", "Tensor[(n, ?), int8]");
        infers("ones_like", "", "Tensor[(n, ?), int8]", "Tensor[(n, ?), int8]");
        infers("full_like", "", "Tensor[(n, ?), int8]", "Tensor[(n, ?), int8]", "float32");
        defers("full", "shape=[2]", "_");
        defers("zeros_like", "", "_");
        defers("full_like", "", "Tensor[(2), int8]", "_");
        rejects("zeros", "shape=[2, -3]", "zeros: shape [2, -3] has a negative dim -3");
        rejects("ones", "dtype=\"float32\"", "ones: attribute 'shape' is required");
        rejects("zeros", "shape=[2], dtype=\"float7\"", "zeros: attribute 'dtype': unknown dtype 'float7'");
        rejects("full", "shape=[2]", "full: fill_value must be a scalar, got Tensor[(2), float32]", "Tensor[(2), float32]");
        rejects("full_like", "", "full_like: fill_value must be a scalar, got Tensor[(1), float32]", F, "Tensor[(1), float32]");
        rejects("zeros_like", "dtype=\"int8\"", "zeros_like: unknown attribute 'dtype'", F);
    }

    @Test
    void split() {
        infers("split", "indices_or_sections=3", "(Tensor[(2, n), float32], Tensor[(2, n), float32], Tensor[(2, n), float32])",
                "Tensor[(6, n), float32]");
        infers("split", "indices_or_sections=2, axis=1", "(Tensor[(4, n), float32], Tensor[(4, n), float32])", "Tensor[(4, 2 * n), float32]");
        infers("split", "indices_or_sections=2", "(Tensor[(?), float32], Tensor[(?), float32])", "Tensor[(?), float32]");
        infers("split", "indices_or_sections=[2, 5], axis=-1", "(Tensor[(3, 2), int8], Tensor[(3, 3), int8], Tensor[(3, 2), int8])",
                "Tensor[(3, 7), int8]");
        infers("split", "indices_or_sections=[2]", "(Tensor[(2), int8], Tensor[(n - 2), int8])", "Tensor[(n), int8]");
        infers("split", "indices_or_sections=[]", "(Tensor[(5), int8],)", "Tensor[(5), int8]");
        defers("split", "indices_or_sections=2", "_");
        rejects("split", "indices_or_sections=4", "split: axis 0 has size 6, which does not divide into 4 equal sections", "Tensor[(6), int8]");
        rejects("split", "indices_or_sections=[3, 1]", "split: indices [3, 1] must be non-negative and non-decreasing", "Tensor[(6), int8]");
        rejects("split", "indices_or_sections=[7]", "split: index 7 is beyond axis 0 of size 6", "Tensor[(6), int8]");
        rejects("split", "indices_or_sections=0", "split: number of sections must be positive, got 0", "Tensor[(6), int8]");
        rejects("split", "indices_or_sections=2, axis=1", "split: axis 1 is out of range for rank 1 (must be in [-1, 0])", "Tensor[(6), int8]");
    }

    @Test
    void gather() {
        infers("gather", "axis=1", "Tensor[(2, 7), float32]", F, "Tensor[(2, 7), int32]");
        infers("gather", "axis=0", "Tensor[(n, ?), float32]", "Tensor[(?, ?), float32]", "Tensor[(n, ?), int64]");
        defers("gather", "axis=0", F, "_");
        rejects("gather", "axis=0", "gather: indices (2) must have the rank of data (2, 3)", F, "Tensor[(2), int32]");
        rejects("gather", "axis=0", "gather: indices (2, 4) exceed data (2, 3) in dim 1 (only axis 0 may differ freely)", F, "Tensor[(2, 4), int32]");
        rejects("gather", "axis=-3", "gather: axis -3 is out of range for rank 2 (must be in [-2, 1])", F, "Tensor[(2, 3), int32]");
        rejects("gather", "axis=0", "gather: indices must have an integer dtype, got float32", F, F);
        rejects("gather", "", "gather: attribute 'axis' is required", F, F);
    }

    @Test
    void broadcastTo() {
        infers("broadcast_to", "shape=[4, 2, 3]", "Tensor[(4, 2, 3), float32]", "Tensor[(2, 1), float32]");
        infers("broadcast_to", "shape=[4, 3]", "Tensor[(4, 3), float32]", "Tensor[(?, n), float32]");
        infers("broadcast_to", "shape=[2, 3], dtype=\"\"", "Tensor[(2, 3), int8]", "int8");
        defers("broadcast_to", "shape=[2]", "_");
        rejects("broadcast_to", "shape=[4, 3]", "broadcast_to: cannot broadcast (2, 3) to (4, 3): input dim 0 is 2, must be 1 or 4", F);
        rejects("broadcast_to", "shape=[3]", "broadcast_to: cannot broadcast (2, 3) to (3): the input has more dims than the target", F);
    }

    @Test
    void tile() {
        infers("tile", "reps=[2]", "Tensor[(n, 6), float32]", "Tensor[(n, 3), float32]");
        infers("tile", "reps=[2, 1, 2]", "Tensor[(2, ?, 6), float32]", "Tensor[(?, 3), float32]");
        infers("tile", "reps=[3, 2]", "Tensor[(3 * n, 2), float32]", "Tensor[(n, 1), float32]");
        defers("tile", "reps=[2]", "_");
        rejects("tile", "reps=[2, -1]", "tile: reps [2, -1] must be non-negative", F);
        rejects("tile", "", "tile: attribute 'reps' is required", F);
    }

    @Test
    void stack() {
        infers("stack", "", "Tensor[(2, n, 3), float32]", "(Tensor[(n, 3), float32], Tensor[(n, 3), float32])");
        infers("stack", "axis=-1", "Tensor[(4, 3, 3), float32]", "(Tensor[(?, 3), float32], Tensor[(4, ?), float32], Tensor[(4, 3), float32])");
        infers("stack", "axis=2", "Tensor[(2, 3, 1), float32]", "(" + F + ",)");
        defers("stack", "", "(" + F + ", _)");
        rejects("stack", "axis=3", "stack: axis 3 is out of range for rank 3 (must be in [-3, 2])", "(" + F + ", " + F + ")");
        rejects("stack", "", "stack: input 1 has shape (3, 2) but input 0 has (2, 3): all inputs must have the same shape",
                "(" + F + ", Tensor[(3, 2), float32])");
        rejects("stack", "", "stack: input 1 has dtype int32 but input 0 has float32", "(" + F + ", Tensor[(2, 3), int32])");
        rejects("stack", "", "stack: needs at least one input, got an empty tuple", "()");
    }

    @Test
    void reverse() {
        infers("reverse", "axis=1", "Tensor[(n, ?), float32]", "Tensor[(n, ?), float32]");
        defers("reverse", "axis=0", "_");
        rejects("reverse", "axis=2", "reverse: axis 2 is out of range for rank 2 (must be in [-2, 1])", F);
        rejects("reverse", "", "reverse: attribute 'axis' is required", F);
    }

    @Test
    void layoutTransform() {
        infers("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NCHW8c\"", "Tensor[(1, 2, 5, 5, 8), float32]", "Tensor[(1, 16, 5, 5), float32]");
        infers("layout_transform", "src_layout=\"NCHW8c\", dst_layout=\"NCHW\"", "Tensor[(n, 16, 5, 5), float32]", "Tensor[(n, 2, 5, 5, 8), float32]");
        infers("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NHWC\"", "Tensor[(n, ?, 5, 3), float32]", "Tensor[(n, 3, ?, 5), float32]");
        infers("layout_transform", "src_layout=\"NCHW8c\", dst_layout=\"NCHW4c\"", "Tensor[(1, 2 * c, 5, 5, 4), float32]",
                "Tensor[(1, c, 5, 5, 8), float32]");
        infers("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NCHW4c\"", "Tensor[(1, ?, 5, 5, 4), float32]", "Tensor[(1, ?, 5, 5), float32]");
        defers("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NHWC\"", "_");
        rejects("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NCHW8c\"",
                "layout_transform: axis C of size 3 does not divide into blocks of 8 for NCHW8c", "Tensor[(1, 3, 5, 5), float32]");
        rejects("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NHWC\"",
                "layout_transform: input (1, 3, 5) has rank 3 but layout NCHW has 4 axes", "Tensor[(1, 3, 5), float32]");
        rejects("layout_transform", "src_layout=\"NCHW\", dst_layout=\"NHW\"",
                "layout_transform: NCHW and NHW must have the same primal axes", "Tensor[(1, 3, 5, 5), float32]");
        rejects("layout_transform", "src_layout=\"NCHW8c\", dst_layout=\"NCHW\"",
                "layout_transform: block axis 8c of NCHW8c has size 4 in input (1, 2, 5, 5, 4)", "Tensor[(1, 2, 5, 5, 4), float32]");
        rejects("layout_transform", "src_layout=\"NCHW8d\", dst_layout=\"NCHW\"",
                "layout_transform: bad layout \"NCHW8d\": block 8d has no primal axis D", "Tensor[(1, 2, 5, 5, 8), float32]");
        rejects("layout_transform", "src_layout=\"NCHWc\", dst_layout=\"NCHW\"",
                "layout_transform: bad layout \"NCHWc\": expected an upper-case axis or a block like 8c at position 4", "Tensor[(1, 2, 5, 5, 8), float32]");
    }

    @Test
    void arange() {
        infers("arange", "", "Tensor[(?), float32]", "float32", "float32", "float32");
        infers("arange", "dtype=\"int64\"", "Tensor[(?), int64]", "int64", "int64", "int64");
        defers("arange", "", "float32", "_", "float32");
        rejects("arange", "", "arange: stop must be a scalar float32 (the dtype attribute), got int32", "float32", "int32", "float32");
        rejects("arange", "", "arange: step must be a scalar float32 (the dtype attribute), got Tensor[(1), float32]",
                "float32", "float32", "Tensor[(1), float32]");
    }

    @Test
    void shapeOf() {
        infers("shape_of", "", "Tensor[(3), int32]", "Tensor[(n, ?, 2), float32]");
        infers("shape_of", "dtype=\"int64\"", "Tensor[(0), int64]", "float32");
        defers("shape_of", "", "_");
        rejects("shape_of", "dtype=\"float32\"", "shape_of: dtype must be an integer type, got float32", F);
    }

    @Test
    void oneHot() {
        infers("one_hot", "depth=4, dtype=\"float32\"", "Tensor[(n, 3, 4), float32]", "Tensor[(n, 3), int32]", "float32", "float32");
        infers("one_hot", "depth=4, axis=0", "Tensor[(4, n, 3), int8]", "Tensor[(n, 3), int64]", "int8", "int8");
        infers("one_hot", "depth=4, axis=1", "Tensor[(?, 4), float32]", "Tensor[(?), int32]", "float32", "float32");
        defers("one_hot", "depth=4", "Tensor[(2), int32]", "_", "float32");
        rejects("one_hot", "depth=4, axis=3", "one_hot: axis 3 is out of range for rank 3 (must be in [-3, 2])",
                "Tensor[(2, 2), int32]", "float32", "float32");
        rejects("one_hot", "depth=4", "one_hot: on_value must be a scalar, got Tensor[(1), float32]",
                "Tensor[(2), int32]", "Tensor[(1), float32]", "float32");
        rejects("one_hot", "depth=4", "one_hot: indices must have an integer dtype, got float32", "Tensor[(2), float32]", "float32", "float32");
        rejects("one_hot", "", "one_hot: attribute 'depth' is required", "Tensor[(2), int32]", "float32", "float32");
    }

    @Test
    void copy() {
        infers("copy", "", "Tensor[(n, ?), int8]", "Tensor[(n, ?), int8]");
        defers("copy", "", "_");
        rejects("copy", "axis=0", "copy: unknown attribute 'axis'", F);
    }

    @Test
    void reshapeLike() {
        infers("reshape_like", "", "Tensor[(3, 2), float32]", F, "Tensor[(3, 2), int8]");
        infers("reshape_like", "lhs_begin=1, rhs_begin=1", "Tensor[(2, n, ?), float32]", "Tensor[(2, 6), float32]", "Tensor[(5, n, ?), int8]");
        defers("reshape_like", "", F, "_");
        rejects("reshape_like", "", "reshape_like: cannot reshape (2, 3) (6 elements) into (4, 2) (8 elements)", F, "Tensor[(4, 2), int8]");
        rejects("reshape_like", "lhs_begin=3", "reshape_like: lhs_begin 3 is out of range for rank 2", F, F);
    }

    @Test
    void gatherNd() {
        infers("gather_nd", "", "Tensor[(5, 4), float32]", "Tensor[(2, 3, 4), float32]", "Tensor[(2, 5), int32]");
        infers("gather_nd", "", "Tensor[(?, 3, 4), float32]", "Tensor[(n, 3, 4), float32]", "Tensor[(1, ?), int64]");
        infers("gather_nd", "index_rank=2", "Tensor[(7, 4), float32]", "Tensor[(2, 3, 4), float32]", "Tensor[(?, 7), int32]");
        defers("gather_nd", "", "_", "Tensor[(2, 5), int32]");
        rejects("gather_nd", "", "gather_nd: indices (4, 5) index 4 dims but data (2, 3) has rank 2", F, "Tensor[(4, 5), int32]");
        rejects("gather_nd", "", "gather_nd: the first dim of indices (?, 5) must be static (or index_rank given) to know how many data dims it indexes",
                F, "Tensor[(?, 5), int32]");
        infers("gather_nd", "batch_dims=1", "Tensor[(2, 5, 4), float32]", "Tensor[(2, 3, 4), float32]", "Tensor[(1, 2, 5), int32]");
        rejects("gather_nd", "batch_dims=1", "gather_nd: batch dim 0 of indices (1, 5) is 5 but of data (2, 3) is 2", F, "Tensor[(1, 5), int32]");
        rejects("gather_nd", "batch_dims=1", "gather_nd: indices (2, 2) index 2 dims after 1 batch dims but data (2, 3) has rank 2",
                F, "Tensor[(2, 2), int32]");
        rejects("gather_nd", "batch_dims=-1", "gather_nd: batch_dims must be non-negative, got -1", F, "Tensor[(1, 5), int32]");
        rejects("gather_nd", "index_rank=1", "gather_nd: index_rank 1 does not match the first dim 2 of indices", F, "Tensor[(2, 5), int32]");
    }

    @Test
    void scatterElements() {
        infers("scatter_elements", "axis=1", F, F, "Tensor[(2, 7), int64]", "Tensor[(2, 7), float32]");
        infers("scatter_elements", "reduction=\"add\"", "Tensor[(n, 3), float32]", "Tensor[(n, 3), float32]", "Tensor[(?, 2), int32]",
                "Tensor[(?, 2), float32]");
        defers("scatter_elements", "", F, "_", "Tensor[(2, 2), float32]");
        rejects("scatter_elements", "", "scatter_elements: indices (2) must have the rank of data (2, 3)", F, "Tensor[(2), int32]",
                "Tensor[(2), float32]");
        rejects("scatter_elements", "", "scatter_elements: updates (2, 3) must have the shape of indices (2, 2)", F, "Tensor[(2, 2), int32]",
                "Tensor[(2, 3), float32]");
        rejects("scatter_elements", "", "scatter_elements: updates have dtype int32 but data float32", F, "Tensor[(2, 2), int32]",
                "Tensor[(2, 2), int32]");
        rejects("scatter_elements", "", "scatter_elements: indices (1, 4) exceed data (2, 3) in dim 1 (only axis 0 may differ freely)", F,
                "Tensor[(1, 4), int32]", "Tensor[(1, 4), float32]");
        rejects("scatter_elements", "", "scatter_elements: indices must have an integer dtype, got float32", F, F, F);
        rejects("scatter_elements", "reduction=\"mean\"",
                "scatter_elements: reduction must be \"update\", \"add\", \"mul\", \"min\" or \"max\", got \"mean\"", F,
                "Tensor[(2, 2), int32]", "Tensor[(2, 2), float32]");
    }

    @Test
    void scatterNd() {
        infers("scatter_nd", "", F, F, "Tensor[(1, 4), int64]", "Tensor[(4, 3), float32]");
        infers("scatter_nd", "mode=\"mul\"", F, F, "Tensor[(2, 5), int32]", "Tensor[(5), float32]");
        infers("scatter_nd", "", "Tensor[(n, 3), float32]", "Tensor[(n, 3), float32]", "Tensor[(1, ?), int32]", "Tensor[(?, 3), float32]");
        defers("scatter_nd", "", F, "Tensor[(1, 4), int64]", "_");
        rejects("scatter_nd", "", "scatter_nd: updates (4, 2) must have shape (4, 3) (indices (1, 4) after M, then data (2, 3) from dim 1)", F,
                "Tensor[(1, 4), int64]", "Tensor[(4, 2), float32]");
        rejects("scatter_nd", "", "scatter_nd: indices (3, 4) index 3 dims but data (2, 3) has rank 2", F, "Tensor[(3, 4), int64]",
                "Tensor[(4), float32]");
        rejects("scatter_nd", "", "scatter_nd: the first dim of indices (?, 4) must be static to know how many data dims it indexes", F,
                "Tensor[(?, 4), int64]", "Tensor[(4), float32]");
        rejects("scatter_nd", "mode=\"set\"", "scatter_nd: mode must be \"update\", \"add\", \"mul\", \"min\" or \"max\", got \"set\"", F,
                "Tensor[(1, 4), int64]", "Tensor[(4, 3), float32]");
    }
}
