package dev.relayfarm.services.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TuneOptionTest {
    @Test
    void parsesTheThreeOptionsAndWritesThemBack() {
        assertEquals(TuneOption.APPLY, TuneOption.parse(null));
        assertEquals(TuneOption.APPLY, TuneOption.parse(" Apply "));
        assertEquals(TuneOption.Mode.OFF, TuneOption.parse("off").mode());
        TuneOption b = TuneOption.parse("budget=90s");
        assertEquals(Duration.ofSeconds(90), b.budget());
        assertEquals("budget=90s", b.toString());
        assertEquals(Duration.ofMinutes(5), TuneOption.parse("budget=5m").budget());
        assertEquals(Duration.ofSeconds(30), TuneOption.parse("budget=PT30S").budget());
        assertEquals(b, TuneOption.parse(b.toString()));
    }

    @Test
    void refusesWhatItCannotReadNamingWhatItAccepts() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TuneOption.parse("fast")).getMessage().contains("off, apply or budget="));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TuneOption.parse("budget=5 minutes")).getMessage().contains("not a duration"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TuneOption.parse("budget=0s")).getMessage().contains("above 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TuneOption.parse("budget=2h")).getMessage().contains("POST /api/v1/tuning-runs"));
    }
}
