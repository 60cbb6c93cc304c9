package dev.relayfarm.infra;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.filter.ThresholdFilter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.FileAppender;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the farm's log goes when a person runs {@code ./relayfarm}: everything into {@code <work-dir>/farm.log}, and
 * only warnings and errors to the terminal (stderr). The broker, the database and five services log from their own
 * threads while the demo prints its progress; interleaved, neither could be read. Warnings stay on the terminal, so a
 * problem is never hidden in a file. Tests that start a {@link LocalFarm} directly keep logback.xml's console log.
 */
final class FarmLog {
    private FarmLog() {}

    /** Sends the log to {@code <workDir>/farm.log} (appended) and keeps WARN and above on the console; returns the file. */
    static Path toFile(Path workDir) {
        Path file = workDir.toAbsolutePath().resolve("farm.log");
        try {
            Files.createDirectories(file.getParent());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the farm's work folder " + file.getParent() + ": " + e.getMessage(), e);
        }
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) return file; // not logback: leave it be
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(ctx);
        encoder.setPattern("%d{yyyy-MM-dd HH:mm:ss.SSS} %-5level [%thread] %logger{36} %msg%n");
        encoder.start();
        FileAppender<ILoggingEvent> appender = new FileAppender<>();
        appender.setContext(ctx);
        appender.setName("FILE");
        appender.setFile(file.toString());
        appender.setAppend(true);
        appender.setEncoder(encoder);
        appender.start();
        ch.qos.logback.classic.Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(appender);
        Appender<ILoggingEvent> console = root.getAppender("CONSOLE");
        if (console != null) {
            ThresholdFilter warnings = new ThresholdFilter();
            warnings.setLevel(Level.WARN.levelStr);
            warnings.start();
            console.addFilter(warnings);
        }
        return file;
    }
}
