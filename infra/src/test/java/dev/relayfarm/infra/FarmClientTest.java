package dev.relayfarm.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.artifact.ArtifactArchive;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unpacking the artifact tarball the gateway serves: the folder with manifest.json is found; entries escaping the folder are
 * refused. The archives are written by commons-compress, a tar writer independent of ours.
 */
class FarmClientTest {
    @TempDir
    Path dir;

    @Test
    void unpacksAndFindsTheManifestFolder() throws IOException {
        byte[] tgz = tarGz("model/manifest.json", "{}", "model/lib.so", "ELF");
        Path root = FarmClient.artifactFolder(ArtifactArchive.unpack(new ByteArrayInputStream(tgz), dir));
        assertEquals(dir.resolve("model").toAbsolutePath(), root);
        assertEquals("ELF", Files.readString(root.resolve("lib.so")));
    }

    @Test
    void refusesEntriesOutsideTheFolder() throws IOException {
        byte[] tgz = tarGz("../evil.sh", "rm -rf", "manifest.json", "{}");
        IOException e = assertThrows(IOException.class, () -> FarmClient.artifactFolder(ArtifactArchive.unpack(new ByteArrayInputStream(tgz), dir)));
        assertTrue(e.getMessage().contains("../evil.sh"), e.getMessage());
        assertTrue(Files.notExists(dir.resolveSibling("evil.sh")));
    }

    @Test
    void anArchiveWithoutManifestIsNotAnArtifact() throws IOException {
        byte[] tgz = tarGz("lib.so", "ELF");
        IOException e = assertThrows(IOException.class, () -> FarmClient.artifactFolder(ArtifactArchive.unpack(new ByteArrayInputStream(tgz), dir)));
        assertTrue(e.getMessage().contains("manifest.json"), e.getMessage());
    }

    static byte[] tarGz(String... namesAndContents) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(new GZIPOutputStream(bytes))) {
            for (int i = 0; i < namesAndContents.length; i += 2) {
                byte[] data = namesAndContents[i + 1].getBytes(StandardCharsets.UTF_8);
                TarArchiveEntry e = new TarArchiveEntry(namesAndContents[i]);
                e.setSize(data.length);
                tar.putArchiveEntry(e);
                tar.write(data);
                tar.closeArchiveEntry();
            }
        }
        return bytes.toByteArray();
    }
}
