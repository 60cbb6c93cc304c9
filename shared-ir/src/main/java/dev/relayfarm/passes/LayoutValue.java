package dev.relayfarm.passes;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ops.layout.Layout;

/**
 * A tensor during a layout rewrite: {@code expr} computes, in layout {@code current}, the value the
 * original program computed in layout {@code original} (e.g. current {@code NCHW8c}, original
 * {@code NCHW}). {@code layout_transform(expr, current, original)} gives the original value back.
 */
record LayoutValue(Expr expr, Layout current, Layout original) {}
