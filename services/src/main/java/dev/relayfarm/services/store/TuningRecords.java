package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.record.TuningRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The farm's tuning records (table {@code tuning_records}) in and out as the library's {@link TuningRecord}s, the
 * records-file format ({@code relayc tune --records}): one JSON line per record, the field names the table's columns
 * (V4). Exported rows go through {@link TuningRecord#fromJson} and {@link TuningRecord#toJson}, so what leaves is
 * exactly what an import or the library reads back; the farm's own columns (ids, task, device, request) stay behind.
 */
@Component
public class TuningRecords {
    private static final Logger LOG = LoggerFactory.getLogger(TuningRecords.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Rows fetched per round trip while exporting: a records table grows to millions of rows. */
    private static final int FETCH = 500;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    public TuningRecords(JdbcTemplate jdbc, TransactionTemplate tx) {
        this.jdbc = jdbc;
        this.tx = tx;
    }

    /**
     * Hands every record {@code filter} selects to {@code line} as its JSON line (no newline), oldest first, reading
     * the table with a cursor so memory does not grow with it. A row the library cannot read (hardware the agent never
     * filled in) is left out with a warning rather than exported as a line no one can import. Returns the lines written.
     */
    public long export(RecordFilter filter, Consumer<String> line) {
        StringBuilder sql = new StringBuilder("""
                SELECT id, workload_key, template, config::text, target, device_class, hardware::text, compiler, relayfarm_version, cost_us, cv,
                       number, repeat, default_cost_us, error, error_detail, measured_at
                FROM tuning_records WHERE true""");
        List<Object> args = new ArrayList<>();
        if (filter.workload() != null) {
            sql.append(" AND workload_key = ?");
            args.add(filter.workload());
        }
        if (filter.target() != null) {
            sql.append(" AND target = ?");
            args.add(filter.target());
        }
        if (filter.deviceClass() != null) {
            sql.append(" AND device_class = ?");
            args.add(filter.deviceClass());
        }
        sql.append(" ORDER BY id");
        long[] written = {0};
        // a transaction: PostgreSQL's JDBC driver only fetches with a cursor (fetch size) outside auto-commit
        tx.executeWithoutResult(s -> jdbc.query(con -> {
            var ps = con.prepareStatement(sql.toString());
            ps.setFetchSize(FETCH);
            for (int i = 0; i < args.size(); i++) ps.setObject(i + 1, args.get(i));
            return ps;
        }, rs -> {
            String json;
            try {
                json = TuningRecord.fromJson(node(rs)).toJson();
            } catch (IllegalArgumentException e) {
                LOG.warn("tuning_records row {} is not a readable record, not exported: {}", rs.getLong("id"), e.getMessage());
                return;
            }
            line.accept(json);
            written[0]++;
        }));
        return written[0];
    }

    /**
     * Adds {@code records} in one transaction, skipping each that is already stored (same workload, config, target,
     * device class, compiler, measurement time and cost: the same measurement imported twice) or that repeats an
     * earlier one of the list. Imports run one at a time (an advisory lock), so two concurrent imports of one file
     * cannot both add it. Imported rows belong to no task, device or measure request of this farm.
     */
    public RecordImport importAll(List<TuningRecord> records) {
        return tx.execute(s -> {
            jdbc.queryForList("SELECT pg_advisory_xact_lock(hashtext('relayfarm-records-import'))::text", String.class);
            int imported = 0;
            for (TuningRecord r : records) imported += insertIfNew(r);
            return new RecordImport(imported, records.size() - imported);
        });
    }

    private int insertIfNew(TuningRecord r) {
        Double cost = null, cv = null;
        Integer number = null, repeat = null;
        String error = null, detail = null;
        switch (r.outcome()) {
            case Measurement.Cost c -> {
                cost = c.medianUs();
                cv = Double.isFinite(c.cv()) ? c.cv() : null;
                number = c.number();
                repeat = c.repeat();
            }
            case Measurement.Failure f -> {
                error = f.error().name();
                detail = f.detail();
            }
        }
        ObjectNode hw = JSON.createObjectNode();
        hw.put("arch", r.device().arch());
        hw.put("model", r.device().model());
        r.device().isa().forEach(hw.putArray("isa")::add);
        hw.put("cores", r.device().cores());
        String config = r.config().toJson();
        OffsetDateTime at = OffsetDateTime.ofInstant(r.measuredAt(), ZoneOffset.UTC);
        return jdbc.update("""
                INSERT INTO tuning_records (workload_key, template, config, target, device_class, hardware, compiler, relayfarm_version,
                                            cost_us, cv, number, repeat, default_cost_us, error, error_detail, measured_at)
                SELECT ?, ?, ?::jsonb, ?, ?, ?::jsonb, ?, ?, ?::double precision, ?::double precision, ?::int, ?::int, ?::double precision, ?, ?,
                       ?::timestamptz
                WHERE NOT EXISTS (SELECT 1 FROM tuning_records
                                  WHERE workload_key = ? AND config = ?::jsonb AND target = ? AND device_class = ? AND compiler = ?
                                    AND measured_at = ?::timestamptz AND cost_us IS NOT DISTINCT FROM ?::double precision)""",
                r.workloadKey(), r.template(), config, r.target(), r.deviceClass(), hw.toString(), r.compiler(), r.relayfarmVersion(),
                cost, cv, number, repeat, r.defaultCostUs().isPresent() ? r.defaultCostUs().getAsDouble() : null, error, detail, at,
                r.workloadKey(), config, r.target(), r.deviceClass(), r.compiler(), at, cost);
    }

    /** The row as the library's JSON object: the field names are the columns. */
    private static ObjectNode node(ResultSet rs) throws SQLException {
        ObjectNode n = JSON.createObjectNode();
        n.put("workload_key", rs.getString("workload_key"));
        n.put("template", rs.getString("template"));
        n.set("config", Columns.json(rs, "config"));
        n.put("target", rs.getString("target"));
        n.put("device_class", rs.getString("device_class"));
        n.set("hardware", Columns.json(rs, "hardware"));
        n.put("compiler", rs.getString("compiler"));
        n.put("relayfarm_version", rs.getString("relayfarm_version"));
        Double cost = Columns.nullableDouble(rs, "cost_us");
        if (cost != null) {
            n.put("cost_us", cost);
            Double cv = Columns.nullableDouble(rs, "cv");
            if (cv != null) n.put("cv", cv);
            Integer number = Columns.nullableInt(rs, "number");
            if (number != null) n.put("number", number);
            Integer repeat = Columns.nullableInt(rs, "repeat");
            if (repeat != null) n.put("repeat", repeat);
        } else {
            n.put("error", rs.getString("error"));
            n.put("error_detail", rs.getString("error_detail"));
        }
        Double def = Columns.nullableDouble(rs, "default_cost_us");
        if (def != null) n.put("default_cost_us", def);
        n.put("measured_at", Columns.instant(rs, "measured_at").toString());
        return n;
    }

    /**
     * A worker's write: {@code record} of measure request {@code requestId} at {@code position} (0: the default) unless that
     * position of that request is written already; returns whether it wrote it. The row is built from the record's JSON
     * line ({@code jsonb_populate_record}: its field names are the columns), the farm's own columns beside it.
     */
    public boolean insert(TuningRecord record, Long taskId, String deviceId, UUID requestId, int position) {
        int n = jdbc.update("""
                INSERT INTO tuning_records (task_id, device_id, request_id, position, workload_key, target, config, cost_us, error, error_detail,
                                            measured_at, template, device_class, hardware, compiler, relayfarm_version, cv, number, repeat, default_cost_us)
                SELECT ?, ?, ?, ?, r.workload_key, r.target, r.config, r.cost_us, r.error, r.error_detail,
                       r.measured_at, r.template, r.device_class, r.hardware, r.compiler, r.relayfarm_version, r.cv, r.number, r.repeat, r.default_cost_us
                FROM jsonb_populate_record(NULL::tuning_records, ?::jsonb) r
                ON CONFLICT (request_id, position) WHERE request_id IS NOT NULL DO NOTHING
                """, taskId, deviceId, requestId, position, record.toJson());
        return n == 1;
    }

    /** The records of a workload for a target and device class, oldest first (what a worker resumes from, what a job applies). */
    public List<TuningRecord> of(String workloadKey, String target, String deviceClass) {
        List<TuningRecord> out = new ArrayList<>();
        jdbc.query("SELECT id, to_jsonb(r)::text FROM tuning_records r WHERE workload_key = ? AND target = ? AND device_class = ? ORDER BY id", rs -> {
            try {
                out.add(TuningRecord.fromJson(rs.getString(2)));
            } catch (IllegalArgumentException e) { // one unreadable row (an import gone wrong) must not stop a task or a job
                LOG.warn("tuning_records row {} is not a readable record, ignored: {}", rs.getLong(1), e.getMessage());
            }
        }, workloadKey, target, deviceClass);
        return out;
    }

    /**
     * What the farm measured of these workloads on {@code target}, any device class: the median cost per (workload,
     * config), and per workload the median of its template default's cost. The dashboard's models page puts them
     * beside a compiled model's kernels (where to spend tuning next).
     */
    public MeasuredCosts measuredCosts(String target, List<String> workloadKeys) {
        Map<String, Map<String, Double>> byConfig = new HashMap<>();
        Map<String, Double> defaults = new HashMap<>();
        if (workloadKeys.isEmpty()) return new MeasuredCosts(byConfig, defaults);
        Object[] keys = workloadKeys.stream().distinct().toArray();
        jdbc.query(con -> {
            var ps = con.prepareStatement("""
                    SELECT workload_key, config::text, percentile_cont(0.5) WITHIN GROUP (ORDER BY cost_us) FROM tuning_records
                    WHERE target = ? AND workload_key = ANY (?) AND cost_us IS NOT NULL GROUP BY 1, 2""");
            ps.setString(1, target);
            ps.setArray(2, con.createArrayOf("text", keys));
            return ps;
        }, rs -> {
            byConfig.computeIfAbsent(rs.getString(1), k -> new HashMap<>()).put(canonical(rs.getString(2)), rs.getDouble(3));
        });
        jdbc.query(con -> {
            var ps = con.prepareStatement("""
                    SELECT workload_key, percentile_cont(0.5) WITHIN GROUP (ORDER BY default_cost_us) FROM tuning_records
                    WHERE target = ? AND workload_key = ANY (?) AND default_cost_us IS NOT NULL GROUP BY 1""");
            ps.setString(1, target);
            ps.setArray(2, con.createArrayOf("text", keys));
            return ps;
        }, rs -> {
            defaults.put(rs.getString(1), rs.getDouble(2));
        });
        return new MeasuredCosts(byConfig, defaults);
    }

    /** A config's JSON with its keys in one order, so a manifest's config and a record's compare as text. */
    public static String canonical(String configJson) {
        try {
            return dev.relayfarm.kernel.template.ScheduleConfig.fromJson(configJson).toJson();
        } catch (IllegalArgumentException e) {
            return configJson;
        }
    }

    /** See {@link #measuredCosts}; configs keyed by {@link #canonical}. */
    public record MeasuredCosts(Map<String, Map<String, Double>> medianByConfig, Map<String, Double> medianDefault) {
        public Double of(String workload, String canonicalConfig) {
            Map<String, Double> m = medianByConfig.get(workload);
            return m == null ? null : m.get(canonicalConfig);
        }

        public Double defaultOf(String workload) {
            return medianDefault.get(workload);
        }
    }
}
