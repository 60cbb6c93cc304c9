package dev.relayfarm.tuning.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.tuning.ScheduleFileException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A records file: JSON Lines, one {@link TuningRecord} per line, oldest first — what {@code relayc tune -o} writes,
 * {@code relayc compile --schedules} applies and {@code relayc records} exports and merges.
 *
 * <p>Crash safety: an append writes whole lines in one write under a file lock and forces them to disk before it
 * returns, so a tuner killed mid-run leaves every finished batch and at most one torn last line. Reading skips that
 * torn line (an unparseable last line without its newline) instead of failing, so {@code --resume} works after a
 * crash; the next append cuts it off first, so it never ends up between whole lines. Any other bad line is a {@link ScheduleFileException} naming
 * file:line. Blank lines and lines starting with {@code #} are skipped, and so are schedule lines ({@code "workload"}
 * without {@code "workload_key"}: the rejections {@code relayc tune}'s model check appends, which
 * {@link ScheduleFile} applies).
 */
public final class RecordFile {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RecordFile() {}

    /** What a file held, and whether its last line was a torn append (skipped). */
    public record Contents(List<TuningRecord> records, boolean tornLastLine) {
        public Contents {
            records = List.copyOf(records);
        }
    }

    /** The records of {@code file}, oldest first; a torn last line is skipped. */
    public static List<TuningRecord> read(Path file) throws IOException {
        return readContents(file).records();
    }

    /** The records of {@code file}, and whether a torn last line was skipped. */
    public static Contents readContents(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        String[] lines = text.split("\n", -1); // the last element is what follows the last newline: "" for a whole file
        List<TuningRecord> out = new ArrayList<>();
        boolean torn = false;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].trim();
            if (line.isEmpty() || line.startsWith("#")) continue;
            try {
                JsonNode n;
                try {
                    n = JSON.readTree(line);
                } catch (IOException e) {
                    throw new IllegalArgumentException("not JSON: " + e.getMessage());
                }
                if (scheduleLine(n)) continue;
                out.add(TuningRecord.fromJson(n));
            } catch (IllegalArgumentException e) {
                if (i == lines.length - 1) { // no newline after it: an append cut short
                    torn = true;
                    continue;
                }
                throw new ScheduleFileException(file + ":" + (i + 1) + ": " + e.getMessage());
            }
        }
        return new Contents(out, torn);
    }

    /**
     * Appends {@code records} to {@code file} (created if missing), one line each, and forces them to disk: what the
     * tuner calls after each measured batch. Safe against other appenders (threads of this JVM and other processes).
     */
    public static void append(Path file, Collection<TuningRecord> records) throws IOException {
        appendLines(file, records.stream().map(TuningRecord::toJson).toList());
    }

    /**
     * Appends whole JSON {@code lines} (records or schedule lines, no newlines in them) as {@link #append} does: under
     * the lock, after cutting off a torn last line, forced to disk.
     */
    public static synchronized void appendLines(Path file, Collection<String> lines) throws IOException {
        if (lines.isEmpty()) return;
        StringBuilder text = new StringBuilder();
        for (String line : lines) text.append(line).append('\n');
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ);
             FileLock lock = ch.lock()) {
            long size = ch.size();
            long lineStart = lastLineStart(ch, size);
            if (lineStart < size) {
                // the file does not end with a newline: a torn append (cut it off, readers skip it anyway) or a whole
                // record written without one (end it)
                ByteBuffer tail = ByteBuffer.allocate(Math.toIntExact(size - lineStart));
                while (tail.hasRemaining() && ch.read(tail, lineStart + tail.position()) >= 0) {}
                String last = new String(tail.array(), StandardCharsets.UTF_8).trim();
                if (whole(last)) {
                    text.insert(0, '\n');
                } else {
                    ch.truncate(lineStart);
                    size = lineStart;
                }
            }
            ByteBuffer bytes = ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8));
            long at = size;
            while (bytes.hasRemaining()) at += ch.write(bytes, at);
            ch.force(false);
        }
    }

    /** Where the file's last line starts: just after its last newline (0 without one; {@code size} when it ends with one). */
    private static long lastLineStart(FileChannel ch, long size) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocate(4096);
        long end = size;
        while (end > 0) {
            long from = Math.max(0, end - chunk.capacity());
            chunk.clear().limit(Math.toIntExact(end - from));
            while (chunk.hasRemaining() && ch.read(chunk, from + chunk.position()) >= 0) {}
            for (int i = chunk.position() - 1; i >= 0; i--) if (chunk.get(i) == '\n') return from + i + 1;
            end = from;
        }
        return 0;
    }

    /** A schedule line (the model check's rejections): {@link ScheduleFile}'s to read, not a measurement. */
    private static boolean scheduleLine(JsonNode n) {
        return n.has("workload") && !n.has("workload_key");
    }

    /** A line that parses: a record, or a schedule line (kept whole, not cut off as torn). */
    private static boolean whole(String line) {
        if (line.isEmpty() || line.startsWith("#")) return true;
        try {
            JsonNode n = JSON.readTree(line);
            if (scheduleLine(n)) return n.hasNonNull("config");
            TuningRecord.fromJson(n);
            return true;
        } catch (IOException | IllegalArgumentException e) {
            return false;
        }
    }

    /** Writes {@code records} as the whole of {@code file}, replacing it at once (a reader never sees half a file). */
    public static void write(Path file, Collection<TuningRecord> records) throws IOException {
        StringBuilder text = new StringBuilder();
        for (TuningRecord r : records) text.append(r.toJson()).append('\n');
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
        try {
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.force(false);
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
