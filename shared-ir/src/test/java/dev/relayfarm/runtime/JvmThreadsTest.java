package dev.relayfarm.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class JvmThreadsTest {
    @Test
    void aThreadsCpuTicksAreReadAfterItsNameWhateverTheNameHolds() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
        String stat = "4242 (C2 CompilerThre) S 1 1 1 0 -1 4194368 10 0 0 0 1234 56 0 0 20 0 1 0";
        assertEquals(1234 + 56, JvmThreads.cpuTicks(stat));
        assertEquals(7 + 8, JvmThreads.cpuTicks("1 (a) b) c) R 1 1 1 0 -1 0 0 0 0 0 7 8 0 0"));
        assertTrue(JvmThreads.busyTicks() >= 0 || !java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task")));
    }
}
