package dev.relayfarm.services.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;

/** Reading the farm tables' nullable and JSONB columns into what the records of this package hold. */
final class Columns {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Columns() {}

    static Double nullableDouble(ResultSet rs, String column) throws SQLException {
        double v = rs.getDouble(column);
        return rs.wasNull() ? null : v;
    }

    static Long nullableLong(ResultSet rs, String column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }

    static Integer nullableInt(ResultSet rs, String column) throws SQLException {
        int v = rs.getInt(column);
        return rs.wasNull() ? null : v;
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }

    /** A JSONB column read as text ({@code col::text}), as a tree the API shows as it is; null stays null. */
    static JsonNode json(ResultSet rs, String column) throws SQLException {
        String text = rs.getString(column);
        if (text == null) return null;
        try {
            return JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("PostgreSQL returned JSONB that is not JSON in " + column + ": " + e.getOriginalMessage(), e);
        }
    }
}
