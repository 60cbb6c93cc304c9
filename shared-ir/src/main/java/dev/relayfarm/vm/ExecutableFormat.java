package dev.relayfarm.vm;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.interp.Npy;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The binary form of an {@link Executable}, the file an artifact carries beside its kernel library
 * ({@link #FILE}). Big-endian ({@link DataOutputStream}), sections in this order:
 *
 * <pre>
 *   header        magic "RFVM", format version (int32)
 *   constants     count; each: byte length, then the array as .npy ({@link Npy}, what numpy.load reads)
 *   kernels       count; each: symbol, input count, parameter count; each parameter: name, dtype, rank, dims
 *   constructors  count; each: ADT name, constructor name, tag, arity
 *   functions     count; each: name, parameter count, register count, instruction count, instructions
 *   instruction   opcode (one byte, {@link #opcode}), then its fields in record order
 * </pre>
 *
 * Reading checks the magic, the version and that nothing is missing or left over, then verifies the
 * bytecode ({@link BytecodeVerifier}), so a bad file is an {@link ExecutableFormatException} naming the
 * problem and the byte offset, never a crash inside the VM. Writing is deterministic: the same
 * executable gives the same bytes.
 */
public final class ExecutableFormat {
    public static final String FILE = "vm.rfx";
    static final byte[] MAGIC = {'R', 'F', 'V', 'M'};
    /**
     * Version 2 added the reference instructions (AllocRef, LoadRef, StoreRef) and kernels with a dynamic leading
     * dimension; version 3 dynamic dimensions anywhere (kernel/lower/WidthKernels). An older file reads as before.
     */
    public static final int VERSION = 3;
    static final int OLDEST_VERSION = 1;

    private ExecutableFormat() {}

    /** A malformed executable file: the message says what is wrong and where. */
    public static final class ExecutableFormatException extends VmException {
        public ExecutableFormatException(String message) {
            super(message);
        }
    }

    public static byte[] toBytes(Executable exe) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write(MAGIC);
            out.writeInt(versionFor(exe));
            out.writeInt(exe.constants().size());
            for (NDArray c : exe.constants()) {
                byte[] npy = Npy.toBytes(c);
                out.writeInt(npy.length);
                out.write(npy);
            }
            out.writeInt(exe.kernels().size());
            for (KernelSignature k : exe.kernels()) {
                out.writeUTF(k.name());
                out.writeInt(k.numInputs());
                out.writeInt(k.params().size());
                for (TensorSpec p : k.params()) {
                    out.writeUTF(p.name());
                    out.writeUTF(p.dtype().toString());
                    out.writeInt(p.shape().size());
                    for (int d : p.shape()) out.writeInt(d);
                }
            }
            out.writeInt(exe.constructors().size());
            for (ConstructorTag c : exe.constructors()) {
                out.writeUTF(c.adt());
                out.writeUTF(c.constructor());
                out.writeInt(c.tag());
                out.writeInt(c.arity());
            }
            out.writeInt(exe.functions().size());
            for (VmFunction f : exe.functions()) {
                out.writeUTF(f.name());
                out.writeInt(f.numParams());
                out.writeInt(f.registerCount());
                out.writeInt(f.code().size());
                for (Instruction i : f.code()) write(out, i);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return bytes.toByteArray();
    }

    public static void write(Path file, Executable exe) throws IOException {
        Files.write(file, toBytes(exe));
    }

    public static Executable read(Path file) throws IOException {
        try {
            return fromBytes(Files.readAllBytes(file));
        } catch (ExecutableFormatException e) {
            throw new ExecutableFormatException(file + ": " + e.getMessage());
        }
    }

    public static Executable fromBytes(byte[] data) {
        Reader in = new Reader(data);
        try {
            byte[] magic = in.bytes(MAGIC.length);
            if (!Arrays.equals(magic, MAGIC)) {
                throw new ExecutableFormatException("not a RelayFarm VM executable: it starts with " + printable(magic) + ", not \"RFVM\"");
            }
            int version = in.data.readInt();
            if (version < OLDEST_VERSION || version > VERSION) {
                throw new ExecutableFormatException("executable format version " + version + " is not supported (this VM reads versions " + OLDEST_VERSION + " to " + VERSION + ")");
            }
            in.version = version;
            in.what = "the constants";
            List<NDArray> constants = new ArrayList<>();
            for (int n = in.count("constants"), i = 0; i < n; i++) {
                byte[] npy = in.bytes(in.count("bytes of constant " + i));
                try {
                    constants.add(Npy.fromBytes(npy));
                } catch (RuntimeException e) {
                    throw new ExecutableFormatException("constant " + i + " is not a valid .npy array: " + e.getMessage());
                }
            }
            in.what = "the kernels";
            List<KernelSignature> kernels = new ArrayList<>();
            for (int n = in.count("kernels"), i = 0; i < n; i++) {
                String name = in.data.readUTF();
                int numInputs = in.data.readInt();
                List<TensorSpec> params = new ArrayList<>();
                for (int m = in.count("parameters of kernel " + name), j = 0; j < m; j++) {
                    String pname = in.data.readUTF();
                    DType dtype = dtype(in.data.readUTF(), "kernel " + name);
                    List<Integer> shape = new ArrayList<>();
                    for (int r = in.count("dims"), k = 0; k < r; k++) {
                        int d = in.data.readInt();
                        if (d == TensorSpec.DYNAMIC && (in.version < 2 || k > 0 && in.version < 3)) {
                            throw new ExecutableFormatException("kernel " + name + ", parameter " + pname + ": a dynamic dimension "
                                    + (k > 0 ? "at position " + k + " in a version-" + in.version + " file (only the leading one may be before version 3)" : "in a version-1 file"));
                        }
                        shape.add(d);
                    }
                    try {
                        params.add(new TensorSpec(pname, shape, dtype));
                    } catch (IllegalArgumentException e) {
                        throw new ExecutableFormatException("kernel " + name + ": " + e.getMessage());
                    }
                }
                try {
                    kernels.add(new KernelSignature(name, params, numInputs));
                } catch (IllegalArgumentException e) {
                    throw new ExecutableFormatException(e.getMessage());
                }
            }
            in.what = "the constructors";
            List<ConstructorTag> constructors = new ArrayList<>();
            for (int n = in.count("constructors"), i = 0; i < n; i++) {
                constructors.add(new ConstructorTag(in.data.readUTF(), in.data.readUTF(), in.data.readInt(), in.data.readInt()));
            }
            List<VmFunction> functions = new ArrayList<>();
            for (int n = in.count("functions"), i = 0; i < n; i++) {
                in.what = "function " + i;
                String name = in.data.readUTF();
                in.what = "function " + name;
                int numParams = in.data.readInt();
                int registers = in.data.readInt();
                List<Instruction> code = new ArrayList<>();
                for (int m = in.count("instructions"), j = 0; j < m; j++) code.add(read(in));
                try {
                    functions.add(new VmFunction(name, numParams, registers, code));
                } catch (IllegalArgumentException e) {
                    throw new ExecutableFormatException(e.getMessage());
                }
            }
            if (in.position() != data.length) {
                throw new ExecutableFormatException((data.length - in.position()) + " bytes left over after the last function (at byte " + in.position() + ")");
            }
            Executable exe = new Executable(functions, constants, kernels, constructors);
            BytecodeVerifier.verify(exe);
            return exe;
        } catch (EOFException e) {
            throw new ExecutableFormatException("truncated executable: the file ends at byte " + data.length + " while reading " + in.what);
        } catch (IOException e) {
            throw new ExecutableFormatException("unreadable executable at byte " + in.position() + " while reading " + in.what + ": " + e);
        }
    }

    /**
     * The oldest version that holds {@code exe}: 3 when a kernel has a dynamic dimension beyond the leading one, 2 when
     * it uses references or kernels of a dynamic leading dimension, else 1, so a VM
     * that reads version 1 only still loads every executable that needs nothing newer.
     */
    static int versionFor(Executable exe) {
        boolean refs = exe.functions().stream().flatMap(f -> f.code().stream())
                .anyMatch(i -> i instanceof Instruction.AllocRef || i instanceof Instruction.LoadRef || i instanceof Instruction.StoreRef);
        boolean dynamic = exe.kernels().stream().anyMatch(k -> k.params().stream().anyMatch(TensorSpec::isDynamic));
        boolean inner = exe.kernels().stream().anyMatch(k -> k.params().stream().anyMatch(t -> t.shape().lastIndexOf(TensorSpec.DYNAMIC) > 0));
        // a width kernel over a leading dimension only (softmax over the batch) is still one: a version-2 VM would take its size for a row count
        boolean width = exe.kernels().stream().anyMatch(k -> k.numInputs() > 0 && k.params().stream().anyMatch(TensorSpec::isDynamic)
                && k.params().get(k.numInputs() - 1).name().equals(dev.relayfarm.kernel.lower.WidthKernels.SIZE_PARAMETER));
        return inner || width ? 3 : refs || dynamic ? 2 : 1;
    }

    /** The opcode of each instruction kind: the byte the file stores. Numbers never change meaning within a format version. */
    static int opcode(Instruction i) {
        return switch (i) {
            case Instruction.Move _ -> 0;
            case Instruction.Ret _ -> 1;
            case Instruction.Invoke _ -> 2;
            case Instruction.InvokeClosure _ -> 3;
            case Instruction.InvokePacked _ -> 4;
            case Instruction.AllocTensor _ -> 5;
            case Instruction.AllocTensorReg _ -> 6;
            case Instruction.AllocStorage _ -> 7;
            case Instruction.AllocADT _ -> 8;
            case Instruction.AllocClosure _ -> 9;
            case Instruction.GetField _ -> 10;
            case Instruction.GetTag _ -> 11;
            case Instruction.If _ -> 12;
            case Instruction.Goto _ -> 13;
            case Instruction.LoadConst _ -> 14;
            case Instruction.LoadConsti _ -> 15;
            case Instruction.ShapeOf _ -> 16;
            case Instruction.ReshapeTensor _ -> 17;
            case Instruction.DeviceCopy _ -> 18;
            case Instruction.KillRegister _ -> 19;
            case Instruction.Fatal _ -> 20;
            case Instruction.AllocRef _ -> 21;
            case Instruction.LoadRef _ -> 22;
            case Instruction.StoreRef _ -> 23;
        };
    }

    private static void write(DataOutputStream out, Instruction i) throws IOException {
        out.writeByte(opcode(i));
        switch (i) {
            case Instruction.Move m -> ints(out, m.src(), m.dst());
            case Instruction.Ret r -> ints(out, r.result());
            case Instruction.Invoke v -> {
                ints(out, v.function());
                list(out, v.args());
                ints(out, v.dst());
            }
            case Instruction.InvokeClosure v -> {
                ints(out, v.closure());
                list(out, v.args());
                ints(out, v.dst());
            }
            case Instruction.InvokePacked p -> {
                ints(out, p.kernel());
                list(out, p.args());
                ints(out, p.numOutputs());
            }
            case Instruction.AllocTensor a -> {
                ints(out, a.storage());
                out.writeLong(a.offset());
                long[] shape = a.shape();
                out.writeInt(shape.length);
                for (long d : shape) out.writeLong(d);
                out.writeUTF(a.dtype().toString());
                ints(out, a.dst());
            }
            case Instruction.AllocTensorReg a -> {
                ints(out, a.storage());
                out.writeLong(a.offset());
                ints(out, a.shape());
                out.writeUTF(a.dtype().toString());
                ints(out, a.dst());
            }
            case Instruction.AllocStorage a -> {
                ints(out, a.size());
                out.writeLong(a.alignment());
                out.writeUTF(a.dtypeHint().toString());
                ints(out, a.dst());
            }
            case Instruction.AllocADT a -> {
                ints(out, a.tag());
                list(out, a.fields());
                ints(out, a.dst());
            }
            case Instruction.AllocClosure a -> {
                ints(out, a.function());
                list(out, a.captured());
                ints(out, a.dst());
            }
            case Instruction.GetField g -> ints(out, g.object(), g.index(), g.dst());
            case Instruction.GetTag g -> ints(out, g.object(), g.dst());
            case Instruction.If f -> ints(out, f.test(), f.target(), f.trueOffset(), f.falseOffset());
            case Instruction.Goto g -> ints(out, g.offset());
            case Instruction.LoadConst c -> ints(out, c.index(), c.dst());
            case Instruction.LoadConsti c -> {
                out.writeLong(c.value());
                ints(out, c.dst());
            }
            case Instruction.ShapeOf s -> ints(out, s.tensor(), s.dst());
            case Instruction.ReshapeTensor s -> ints(out, s.tensor(), s.shape(), s.dst());
            case Instruction.DeviceCopy d -> ints(out, d.src(), d.srcDevice(), d.dstDevice(), d.dst());
            case Instruction.KillRegister k -> ints(out, k.register());
            case Instruction.Fatal f -> out.writeUTF(f.message());
            case Instruction.AllocRef a -> ints(out, a.value(), a.dst());
            case Instruction.LoadRef l -> ints(out, l.ref(), l.dst());
            case Instruction.StoreRef w -> ints(out, w.ref(), w.value());
        }
    }

    private static Instruction read(Reader in) throws IOException {
        DataInputStream d = in.data;
        int at = in.position();
        int op = d.readUnsignedByte();
        if (op >= 21 && op <= 23 && in.version < 2) throw new ExecutableFormatException("opcode " + op + " at byte " + at + " needs format version 2, the file is version " + in.version);
        return switch (op) {
            case 0 -> new Instruction.Move(d.readInt(), d.readInt());
            case 1 -> new Instruction.Ret(d.readInt());
            case 2 -> new Instruction.Invoke(d.readInt(), in.list(), d.readInt());
            case 3 -> new Instruction.InvokeClosure(d.readInt(), in.list(), d.readInt());
            case 4 -> {
                int kernel = d.readInt();
                List<Integer> args = in.list();
                int outputs = d.readInt();
                if (outputs < 0 || outputs > args.size()) throw new ExecutableFormatException("InvokePacked at byte " + at + " has " + outputs + " outputs of " + args.size() + " arguments");
                yield new Instruction.InvokePacked(kernel, args, outputs);
            }
            case 5 -> {
                int storage = d.readInt();
                long offset = d.readLong();
                long[] shape = new long[in.count("dims")];
                for (int i = 0; i < shape.length; i++) shape[i] = d.readLong();
                yield new Instruction.AllocTensor(storage, offset, shape, dtype(d.readUTF(), "AllocTensor at byte " + at), d.readInt());
            }
            case 6 -> new Instruction.AllocTensorReg(d.readInt(), d.readLong(), d.readInt(), dtype(d.readUTF(), "AllocTensorReg at byte " + at), d.readInt());
            case 7 -> new Instruction.AllocStorage(d.readInt(), d.readLong(), dtype(d.readUTF(), "AllocStorage at byte " + at), d.readInt());
            case 8 -> new Instruction.AllocADT(d.readInt(), in.list(), d.readInt());
            case 9 -> new Instruction.AllocClosure(d.readInt(), in.list(), d.readInt());
            case 10 -> new Instruction.GetField(d.readInt(), d.readInt(), d.readInt());
            case 11 -> new Instruction.GetTag(d.readInt(), d.readInt());
            case 12 -> new Instruction.If(d.readInt(), d.readInt(), d.readInt(), d.readInt());
            case 13 -> new Instruction.Goto(d.readInt());
            case 14 -> new Instruction.LoadConst(d.readInt(), d.readInt());
            case 15 -> new Instruction.LoadConsti(d.readLong(), d.readInt());
            case 16 -> new Instruction.ShapeOf(d.readInt(), d.readInt());
            case 17 -> new Instruction.ReshapeTensor(d.readInt(), d.readInt(), d.readInt());
            case 18 -> new Instruction.DeviceCopy(d.readInt(), d.readInt(), d.readInt(), d.readInt());
            case 19 -> new Instruction.KillRegister(d.readInt());
            case 20 -> new Instruction.Fatal(d.readUTF());
            case 21 -> new Instruction.AllocRef(d.readInt(), d.readInt());
            case 22 -> new Instruction.LoadRef(d.readInt(), d.readInt());
            case 23 -> new Instruction.StoreRef(d.readInt(), d.readInt());
            default -> throw new ExecutableFormatException("unknown opcode " + op + " at byte " + at + " in " + in.what);
        };
    }

    private static void ints(DataOutputStream out, int... values) throws IOException {
        for (int v : values) out.writeInt(v);
    }

    private static void list(DataOutputStream out, List<Integer> values) throws IOException {
        out.writeInt(values.size());
        for (int v : values) out.writeInt(v);
    }

    private static DType dtype(String text, String where) {
        try {
            return DType.parse(text);
        } catch (RuntimeException e) {
            throw new ExecutableFormatException("unknown dtype \"" + text + "\" in " + where);
        }
    }

    private static String printable(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(x >= 32 && x < 127 ? String.valueOf((char) x) : String.format("\\x%02x", x & 0xff));
        return "\"" + sb + "\"";
    }

    /** A stream over the file's bytes that knows its position (for messages) and refuses absurd counts before allocating. */
    private static final class Reader {
        final ByteArrayInputStream bytes;
        final DataInputStream data;
        final int length;
        String what = "the header";
        int version;

        Reader(byte[] b) {
            this.bytes = new ByteArrayInputStream(b);
            this.data = new DataInputStream(bytes);
            this.length = b.length;
        }

        int position() {
            return length - bytes.available();
        }

        int count(String of) throws IOException {
            int at = position();
            int n = data.readInt();
            // every element takes at least one byte, so a count beyond the bytes left is a corrupt (or truncated) file
            if (n < 0 || n > length - position()) {
                if (n > 0 && n <= Integer.MAX_VALUE) throw new EOFException();
                throw new ExecutableFormatException("a negative count " + n + " of " + of + " at byte " + at + " in " + what);
            }
            return n;
        }

        byte[] bytes(int n) throws IOException {
            byte[] b = new byte[n];
            data.readFully(b);
            return b;
        }

        List<Integer> list() throws IOException {
            int n = count("registers");
            List<Integer> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) out.add(data.readInt());
            return out;
        }
    }
}
