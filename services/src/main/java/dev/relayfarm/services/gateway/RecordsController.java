package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.RecordFilter;
import dev.relayfarm.services.store.RecordImport;
import dev.relayfarm.services.store.TuningRecords;
import dev.relayfarm.tuning.record.TuningRecord;
import jakarta.servlet.http.HttpServletRequest;
import java.io.BufferedReader;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * The farm's tuning records in and out as JSON Lines, one {@link TuningRecord} per line in the library's records-file
 * format, so a records file from {@code relayc tune} and the farm's table move both ways. Export needs any valid
 * token; import {@link Role#OPERATOR}.
 */
@RestController
@ServiceRole(Stage.GATEWAY)
@RequestMapping("/api/v1/records")
public class RecordsController {
    private static final Logger log = LoggerFactory.getLogger(RecordsController.class);
    static final MediaType JSON_LINES = MediaType.parseMediaType("application/x-ndjson");

    private final TuningRecords records;
    private final GatewayProperties props;

    public RecordsController(TuningRecords records, GatewayProperties props) {
        this.records = records;
        this.props = props;
    }

    /**
     * Streams the records (oldest first) as they are read: the table can be large. Errors after the first line can no
     * longer become a problem body; the stream then ends short, and the log says why.
     */
    @GetMapping("/export")
    ResponseEntity<StreamingResponseBody> export(@RequestParam(name = "workload", required = false) String workload,
                                                 @RequestParam(name = "target", required = false) String target,
                                                 @RequestParam(name = "deviceClass", required = false) String deviceClass) {
        RecordFilter filter = new RecordFilter(blank(workload) ? null : workload.trim(),
                blank(target) ? null : SubmitFields.target(target).toString(), blank(deviceClass) ? null : deviceClass.trim());
        StreamingResponseBody body = out -> {
            Writer w = new OutputStreamWriter(out, StandardCharsets.UTF_8);
            long n = records.export(filter, line -> {
                try {
                    w.write(line);
                    w.write('\n');
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            w.flush();
            log.debug("exported {} tuning records ({})", n, filter);
        };
        return ResponseEntity.ok().contentType(JSON_LINES).body(body);
    }

    /**
     * Reads every line first (blank lines skipped) and imports only if all are records: a bad line is a 400 naming its
     * number and what is wrong, and nothing is imported. Duplicates of stored records are skipped and counted. The
     * body is limited like uploads ({@code relayfarm.gateway.max-upload-size}).
     */
    @PostMapping("/import")
    @RequiresRole(Role.OPERATOR)
    Map<String, Object> importRecords(HttpServletRequest request, @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) throws IOException {
        List<TuningRecord> parsed = new ArrayList<>();
        long limit = props.maxUploadSize().toBytes();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(limited(request.getInputStream(), limit), StandardCharsets.UTF_8))) {
            String line;
            int number = 0;
            while ((line = in.readLine()) != null) {
                number++;
                if (line.isBlank()) continue;
                try {
                    parsed.add(TuningRecord.fromJson(line));
                } catch (IllegalArgumentException e) {
                    throw new ApiProblem(ProblemType.BAD_RECORDS, "line " + number + ": " + e.getMessage() + "; nothing was imported",
                            Map.of("line", number));
                }
            }
        }
        RecordImport result = records.importAll(parsed);
        log.info("{} imported {} tuning records ({} duplicates skipped)", caller.name(), result.imported(), result.skipped());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("imported", result.imported());
        body.put("skipped", result.skipped());
        return body;
    }

    /** {@code in}, failing with a 413 problem once more than {@code limit} bytes were read. */
    private static InputStream limited(InputStream in, long limit) {
        return new FilterInputStream(in) {
            private long count;

            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) count(1);
                return b;
            }

            @Override
            public int read(byte[] buf, int off, int len) throws IOException {
                int n = super.read(buf, off, len);
                if (n > 0) count(n);
                return n;
            }

            private void count(int n) {
                count += n;
                if (count > limit) {
                    throw new ApiProblem(ProblemType.UPLOAD_TOO_LARGE, "the records exceed the limit of " + limit
                            + " bytes (relayfarm.gateway.max-upload-size); import them in parts");
                }
            }
        };
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
