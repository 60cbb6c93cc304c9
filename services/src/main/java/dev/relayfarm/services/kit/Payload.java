package dev.relayfarm.services.kit;

/**
 * The payload of a pipeline message ({@link Envelope#payload}), one record per payload schema in {@code schemas/messages/},
 * all of envelope {@link Envelope#SCHEMA_VERSION}: a new version of a payload is a new envelope version. Which record a
 * message carries follows from its producer ({@link #producedBy}), so the JSON names no type.
 */
public sealed interface Payload permits JobPayload, TunedPayload, ArtifactPayload {
    /** The payload record a message from {@code producer} ({@link Envelope#stage}) carries. */
    static Class<? extends Payload> producedBy(String producer) {
        if (producer.equals(Stage.GATEWAY)) return JobPayload.class;
        for (Stage s : Stage.values()) {
            if (s.wireName.equals(producer)) return s.outputPayload();
        }
        throw new IllegalArgumentException("unknown producer stage '" + producer + "', expected " + Stage.GATEWAY + " or a stage's wire name");
    }
}
