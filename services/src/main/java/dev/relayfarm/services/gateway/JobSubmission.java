package dev.relayfarm.services.gateway;

import dev.relayfarm.pipeline.ModelFormat;

/**
 * A checked {@code POST /api/v1/jobs}: every field already validated, target in its canonical form.
 *
 * @param shapes {@code ""} when none were given
 */
record JobSubmission(String modelName, ModelFormat format, byte[] model, String modelSha256, String target, int optLevel, String shapes) {}
