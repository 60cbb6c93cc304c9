package dev.relayfarm.bench;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ONNX Runtime as the reference engine (ARCHITECTURE.md section 7): the CPU provider, graph
 * optimizations at ORT's default, a fixed intra-op thread count so both engines get the same cores.
 * Input tensors are converted once per distinct input list, so a timed {@link #run} is ORT's own work
 * plus copying the outputs out, as it is for our runtime.
 */
public final class OrtRunner implements ModelRunner {
    /**
     * Errors only: ORT warns at WARNING about what its graph optimizer does to the model (hundreds of "Removing initializer
     * ... not used by any node" and "Initializer ... appears in graph inputs" lines for some models), which is its business, not
     * the benchmark's. The environment is a process-wide singleton, so each session's options say it again in case another
     * caller created the environment first.
     */
    private static final OrtLoggingLevel LOG_LEVEL = OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR;

    private final OrtEnvironment env = environment();
    private final Path model;
    private final int threads;
    /** Open, or null between {@link #pause} and the next run. */
    private OrtSession session;
    private final List<String> inputNames;
    private final Map<List<NDArray>, Map<String, OnnxTensor>> converted = new IdentityHashMap<>();

    private OrtRunner(Path model, int threads, OrtSession session) throws OrtException {
        this.model = model;
        this.threads = threads;
        this.session = session;
        this.inputNames = new ArrayList<>(session.getInputNames());
    }

    /** Opens {@code model} with {@code threads} intra-op threads (0 = ORT's default). */
    public static OrtRunner open(Path model, int threads) {
        try {
            return new OrtRunner(model, threads, session(model, threads));
        } catch (OrtException e) {
            throw new IllegalArgumentException(model + ": ONNX Runtime cannot load the model: " + e.getMessage(), e);
        }
    }

    /** A session with ORT's defaults (graph optimizations, spinning workers) but our thread count and log level. */
    private static OrtSession session(Path model, int threads) throws OrtException {
        // the session copies what it needs: its options are native memory to free at once
        try (OrtSession.SessionOptions options = options(threads)) {
            return environment().createSession(model.toString(), options);
        }
    }

    private static OrtSession.SessionOptions options(int threads) throws OrtException {
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        options.setSessionLogLevel(LOG_LEVEL);
        if (threads > 0) options.setIntraOpNumThreads(threads);
        options.setInterOpNumThreads(1);
        return options;
    }

    /**
     * Writes to {@code out} the graph ORT runs for {@code model} once its optimizations are applied, with the options
     * {@link #open} uses: the kernels it picked (whether a QDQ model's groups became QLinearConv, for instance).
     */
    public static void writeOptimized(Path model, int threads, Path out) {
        try (OrtSession.SessionOptions options = options(threads)) {
            options.setOptimizedModelFilePath(out.toString());
            environment().createSession(model.toString(), options).close();
        } catch (OrtException e) {
            throw new IllegalArgumentException(model + ": ONNX Runtime cannot load the model: " + e.getMessage(), e);
        }
    }

    private OrtSession live() throws OrtException {
        if (session == null) session = session(model, threads);
        return session;
    }

    /**
     * Closes the session, and with it its intra-op thread pool: ORT's workers keep spinning after a run (its default,
     * which serves back-to-back runs well) and would take the cores from whatever runs next in this process. The next
     * {@link #run} opens the session again.
     */
    @Override
    public void pause() {
        if (session == null) return;
        try {
            session.close();
        } catch (OrtException e) {
            throw new IllegalStateException("onnxruntime: " + e.getMessage(), e);
        }
        session = null;
    }

    private static OrtEnvironment environment() {
        return OrtEnvironment.getEnvironment(LOG_LEVEL, "relayfarm-bench");
    }

    @Override
    public String name() {
        return "onnxruntime";
    }

    /** The graph's inputs that must be fed (initializers excluded), in graph order. */
    public List<String> inputNames() {
        return inputNames;
    }

    @Override
    public List<NDArray> run(List<NDArray> inputs) {
        if (inputs.size() != inputNames.size()) {
            throw new IllegalArgumentException("onnxruntime: the model takes " + inputNames.size() + " inputs " + inputNames + ", got " + inputs.size());
        }
        try {
            Map<String, OnnxTensor> feed = converted.get(inputs);
            if (feed == null) {
                feed = new LinkedHashMap<>();
                for (int i = 0; i < inputs.size(); i++) feed.put(inputNames.get(i), toOrt(inputs.get(i), inputNames.get(i)));
                converted.put(inputs, feed);
            }
            try (OrtSession.Result result = live().run(feed)) {
                List<NDArray> out = new ArrayList<>();
                for (Map.Entry<String, OnnxValue> e : result) {
                    if (!(e.getValue() instanceof OnnxTensor t)) throw new IllegalStateException("onnxruntime: output " + e.getKey() + " is not a tensor");
                    out.add(fromOrt(t, e.getKey()));
                }
                return out;
            }
        } catch (OrtException e) {
            throw new IllegalStateException("onnxruntime: " + e.getMessage(), e);
        }
    }

    private OnnxTensor toOrt(NDArray a, String name) throws OrtException {
        long[] shape = new long[a.rank()];
        for (int d = 0; d < shape.length; d++) shape[d] = a.dim(d);
        DType dt = a.dtype();
        if (dt.equals(DType.FLOAT32)) return OnnxTensor.createTensor(env, FloatBuffer.wrap(a.floatData()), shape);
        if (dt.equals(DType.FLOAT64)) return OnnxTensor.createTensor(env, DoubleBuffer.wrap(a.doubleData()), shape);
        if (dt.equals(DType.INT64)) return OnnxTensor.createTensor(env, LongBuffer.wrap(a.longData()), shape);
        if (dt.equals(DType.INT32)) return OnnxTensor.createTensor(env, IntBuffer.wrap(a.intData()), shape);
        if (dt.equals(DType.UINT8)) return OnnxTensor.createTensor(env, ByteBuffer.wrap(a.byteData()), shape, OnnxJavaType.UINT8);
        if (dt.equals(DType.INT8)) return OnnxTensor.createTensor(env, ByteBuffer.wrap(a.byteData()), shape, OnnxJavaType.INT8);
        if (dt.equals(DType.BOOL)) return OnnxTensor.createTensor(env, ByteBuffer.wrap(a.byteData()), shape, OnnxJavaType.BOOL);
        throw new IllegalArgumentException("onnxruntime: input " + name + " has dtype " + dt + ", which the benchmark does not feed");
    }

    private static NDArray fromOrt(OnnxTensor t, String name) {
        TensorInfo info = t.getInfo();
        long[] s = info.getShape();
        int[] shape = new int[s.length];
        for (int d = 0; d < s.length; d++) shape[d] = Math.toIntExact(s[d]);
        return switch (info.type) {
            case FLOAT -> NDArray.wrap(DType.FLOAT32, shape, copy(t.getFloatBuffer()));
            case DOUBLE -> NDArray.wrap(DType.FLOAT64, shape, copy(t.getDoubleBuffer()));
            case INT64 -> NDArray.wrap(DType.INT64, shape, copy(t.getLongBuffer()));
            case INT32 -> NDArray.wrap(DType.INT32, shape, copy(t.getIntBuffer()));
            case UINT8 -> NDArray.wrap(DType.UINT8, shape, copy(t.getByteBuffer()));
            case INT8 -> NDArray.wrap(DType.INT8, shape, copy(t.getByteBuffer()));
            case BOOL -> NDArray.wrap(DType.BOOL, shape, copy(t.getByteBuffer()));
            default -> throw new IllegalStateException("onnxruntime: output " + name + " has type " + info.type + ", which the benchmark does not read");
        };
    }

    private static float[] copy(FloatBuffer b) {
        float[] a = new float[b.remaining()];
        b.get(a);
        return a;
    }

    private static double[] copy(DoubleBuffer b) {
        double[] a = new double[b.remaining()];
        b.get(a);
        return a;
    }

    private static long[] copy(LongBuffer b) {
        long[] a = new long[b.remaining()];
        b.get(a);
        return a;
    }

    private static int[] copy(IntBuffer b) {
        int[] a = new int[b.remaining()];
        b.get(a);
        return a;
    }

    private static byte[] copy(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    /** The declared input infos, for building inputs when no test data comes with the model. */
    public Map<String, NodeInfo> inputInfo() {
        try {
            return live().getInputInfo();
        } catch (OrtException e) {
            throw new IllegalStateException("onnxruntime: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        for (Map<String, OnnxTensor> feed : converted.values()) feed.values().forEach(OnnxTensor::close);
        pause();
    }
}
