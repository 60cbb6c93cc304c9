package dev.relayfarm.services.gateway;

import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.serde.Sha256;

/**
 * A checked {@code POST /api/v1/jobs}: every field already validated, target in its canonical form.
 *
 * @param shapes {@code ""} when none were given
 * @param tune   the {@link dev.relayfarm.services.kit.TuneOption} as text
 */
record JobSubmission(String modelName, ModelFormat format, byte[] model, String modelSha256, String target, int optLevel, String shapes, String tune, String quantize) {
    /** The job row's fields of a checked request: the target in its canonical form, the shapes in their comma-joined form. */
    static JobSubmission of(CompileRequest r, String tune, String quantize) {
        byte[] bytes = r.model().bytes();
        return new JobSubmission(r.model().name(), r.model().format(), bytes, Sha256.hex(bytes), r.target().toString(), r.optLevel(), InputShapes.format(r.shapes()), tune, quantize);
    }
}
