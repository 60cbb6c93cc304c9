package dev.relayfarm.kernel.loop;

/**
 * Where an {@link Allocate} puts its buffer: {@code LOCAL} = a small per-thread tile (a C array on the
 * stack, the compiler may keep it in registers), {@code GLOBAL} = a heap block shared by all threads.
 */
public enum Scope { LOCAL, GLOBAL }
