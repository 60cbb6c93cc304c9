package dev.relayfarm.frontend;

import dev.relayfarm.ir.Expr;
import java.util.List;

/**
 * Converts one ONNX node to Relay: returns one expression per node output (an absent optional
 * output may map to null). Converters branch on {@link OnnxNode#opset()} where the operator's rules
 * changed across opsets, and throw {@link OnnxNode#unsupported} for anything they cannot convert
 * faithfully — never a silent approximation.
 */
@FunctionalInterface
public interface OnnxConverter {
    List<Expr> convert(OnnxNode node);
}
