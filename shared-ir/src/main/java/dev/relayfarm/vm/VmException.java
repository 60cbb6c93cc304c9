package dev.relayfarm.vm;

/**
 * A failure while compiling for or running on the VM: a program the VM compiler cannot translate yet (the
 * message names the construct and where it is), a {@link Instruction.Fatal}, a kernel failure, a
 * malformed executable, or the frame budget running out.
 */
public class VmException extends RuntimeException {
    public VmException(String message) {
        super(message);
    }

    public VmException(String message, Throwable cause) {
        super(message, cause);
    }
}
