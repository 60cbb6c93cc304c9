package dev.relayfarm.services.store;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.serde.IrJson;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.stereotype.Component;

/**
 * IR between stages (claim-check): the module's JSON document goes into the blob store with every tensor
 * above the inline limit as a blob of its own, and only the document's sha256 (the envelope's
 * {@code irRef}) travels through Kafka. Unchanged weights are stored once however many stages and jobs
 * pass them on.
 */
@Component
@EnableConfigurationProperties(IrProperties.class)
public class IrStore {
    private final PgBlobStore blobs;
    private final IrJson.Options options;

    public IrStore(PgBlobStore blobs, IrProperties props) {
        this.blobs = blobs;
        this.options = IrJson.Options.DEFAULT.withInlineLimit(props.inlineLimitBytes());
    }

    /** Stores the module; returns its irRef (the sha256 of the document). */
    public String write(IRModule module) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        IrJson.write(module, blobs, options, out);
        return blobs.put(out.toByteArray());
    }

    public IRModule read(String irRef) {
        return IrJson.read(new ByteArrayInputStream(blobs.get(irRef)), blobs);
    }
}
