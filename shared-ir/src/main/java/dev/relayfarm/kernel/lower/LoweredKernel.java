package dev.relayfarm.kernel.lower;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.template.ScheduleConfig;

/**
 * One fused Primitive function as one kernel: the loop nest, its C ABI signature (the function's
 * parameters in order with tuple parameters flattened, then its outputs with a tuple result
 * flattened), the workload (anchor operator and shapes: the key a tuning log is looked up by) and the
 * schedule configuration it was lowered with.
 */
public record LoweredKernel(LoweredFunc func, KernelSignature signature, String workload, ScheduleConfig config) {}
