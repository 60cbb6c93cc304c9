package dev.relayfarm.quantize.qdq;

/** A model the QDQ exporter cannot write (the message names the node and the reason). */
public final class QdqExportException extends RuntimeException {
    public QdqExportException(String message) {
        super(message);
    }
}
