package dev.relayfarm.vta.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.measure.BaselineFailedException;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.compile.OffloadedModule;
import dev.relayfarm.vta.compile.QuantizedRelay;
import dev.relayfarm.vta.compile.ScheduleSearch;
import dev.relayfarm.vta.compile.VtaSchedule;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * VTA layer schedules as tuning records: the grid tuned through the simulator measurer lands in a records file with
 * device class {@code vta-sim-1x16x16} and cycles as cost; the records read back equal, a second run measures nothing,
 * the best stored schedule applied to the model reproduces the searched cycles bit-exactly; the measurer makes a
 * schedule that does not fit or computes something else an error record, never a cost.
 */
class VtaTuningRecordsTest {
    private static final VtaConfig CONFIG = VtaConfig.defaults();
    /** 3 → 16 channels, 3×3 at 16×16 with relu and a uint8 output: a few dozen schedules. */
    private static final IRModule CONV = QuantizedRelay.conv(1, 3, 16, 16, 16, 3, 1, 1, DType.INT8, true, true, 1e-3, 2e-2);

    @Test
    void tunedRecordsRoundTripResumeWithoutMeasuringAndTheAppliedBestReproducesTheSearchedCycles(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("vta.jsonl");
        List<VtaLayerTask> tasks = VtaLayerTasks.of(CONV, CONFIG);
        assertEquals(1, tasks.size());
        VtaLayerTask task = tasks.getFirst();
        List<VtaTuner.Outcome> outcomes = new VtaTuner(new SimulatorMeasurer(), file, new VtaTuner.Options(4, 0), null).tune(tasks, List.of());
        VtaTuner.Outcome o = outcomes.getFirst();
        assertEquals("space exhausted", o.note());
        int candidates = (int) task.candidates().stream().filter(c -> !c.equals(task.defaultConfig())).count();
        assertEquals(candidates, o.measured(), "every schedule of the space but the default, once");

        List<TuningRecord> records = RecordFile.read(file);
        int rounds = (candidates + 3) / 4;
        assertEquals(candidates + rounds, records.size(), "each round: the default, then its schedules");
        for (TuningRecord r : records) {
            assertEquals("vta-sim-1x16x16", r.deviceClass());
            assertEquals(VtaTarget.target(CONFIG), r.target());
            assertEquals(VtaTarget.LOWERING, r.compiler());
            assertEquals(VtaLayerTask.TEMPLATE, r.template());
            assertEquals(task.key(), r.workloadKey());
            assertTrue(r.ok(), "every schedule of the space fits and is bit-exact: " + r.toJson());
            assertEquals(r, TuningRecord.fromJson(r.toJson()), "a record survives its JSON line");
            assertEquals(r.costUs(), VtaTarget.cycles(r.costUs()) / (double) VtaTarget.CLOCK_MHZ, "cost_us is whole cycles at the stated clock");
        }

        // the same grid as ScheduleSearch on the same layer: the same default and best cycles (deterministic model)
        ScheduleSearch.Outcome searched = ScheduleSearch.search(task.layer(), CONFIG, task.input());
        TuningRecord best = o.best().orElseThrow();
        assertEquals(searched.best().cycles(), VtaTarget.cycles(best.costUs()), "the best record's cycles are the search's");
        assertEquals(searched.defaults().cycles(), VtaTarget.cycles(best.defaultCostUs().getAsDouble()), "the default's cycles, recorded beside each");
        assertTrue(best.costUs() <= best.defaultCostUs().getAsDouble());

        // resume: a second run over the finished file measures nothing and appends nothing
        long lines = Files.readAllLines(file).size();
        VtaTuner.Outcome again = new VtaTuner(new SimulatorMeasurer(), file, new VtaTuner.Options(4, 0), null).tune(tasks, records).getFirst();
        assertEquals(0, again.measured());
        assertEquals(lines, Files.readAllLines(file).size());
        assertEquals(best, again.best().orElseThrow());

        // applied: the model compiled with the stored best runs in the best's cycles, bit-exact with the interpreter
        NDArray x = QuantizedRelay.input(11, DType.INT8, 1, 3, 16, 16);
        OffloadedModule applied = OffloadedModule.compile(CONV, CONFIG, VtaRecords.schedules(tasks, records, CONFIG));
        assertEquals(task.schedule(best.config()), applied.lowered().getFirst().schedule());
        OffloadedModule.Result run = applied.run(x);
        assertEquals(VtaTarget.cycles(best.costUs()), run.calls().getFirst().stats().totalCycles());
        assertTrue(((TensorValue) run.value()).data().contentEquals(((TensorValue) Interpreter.runMain(CONV, x)).data()));
        // without records, the default
        OffloadedModule plain = OffloadedModule.compile(CONV, CONFIG, VtaRecords.schedules(tasks, List.of(), CONFIG));
        assertEquals(task.schedule(task.defaultConfig()), plain.lowered().getFirst().schedule());
    }

    @Test
    void aTrialBudgetStopsTheGridAndTheNextRunGoesOnWhereItStopped(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("vta.jsonl");
        List<VtaLayerTask> tasks = VtaLayerTasks.of(CONV, CONFIG);
        VtaTuner.Outcome first = new VtaTuner(new SimulatorMeasurer(), file, new VtaTuner.Options(2, 3), null).tune(tasks, List.of()).getFirst();
        assertEquals(3, first.measured());
        assertEquals("trial budget spent", first.note());
        List<TuningRecord> afterFirst = RecordFile.read(file);
        VtaTuner.Outcome second = new VtaTuner(new SimulatorMeasurer(), file, new VtaTuner.Options(2, 3), null).tune(tasks, afterFirst).getFirst();
        assertEquals(3, second.measured());
        List<TuningRecord> all = RecordFile.read(file);
        long distinct = all.stream().map(TuningRecord::config).filter(c -> !c.equals(tasks.getFirst().defaultConfig())).distinct().count();
        assertEquals(6, distinct, "the second run measured other schedules than the first");
    }

    @Test
    void theMeasurerRecordsAScheduleThatDoesNotFitOrIsNoScheduleAsACompileError() {
        // 64 → 64 channels at 14×14: 14 rows × 4 blocks × 14 columns of accumulators do not fit twice (LayerOffloadTest)
        IRModule m = QuantizedRelay.conv(2, 64, 14, 14, 64, 3, 1, 1, DType.INT8, true, true, 1e-4, 5e-3);
        VtaLayerTask task = VtaLayerTasks.of(m, CONFIG).getFirst();
        ScheduleConfig tooBig = task.config(new VtaSchedule(14, 4, 2));
        ScheduleConfig unknownKnob = task.defaultConfig().with("unroll", 4);
        ScheduleConfig threeThreads = task.defaultConfig().with("virtual_threads", 3);
        List<Measurement> ms = new SimulatorMeasurer().measure(task, List.of(tooBig, unknownKnob, threeThreads, task.defaultConfig()));
        Measurement.Failure fit = (Measurement.Failure) ms.get(0).outcome();
        assertEquals(MeasureError.COMPILE_ERROR, fit.error());
        assertTrue(fit.detail().contains("ACC buffer"), fit.detail());
        Measurement.Failure knob = (Measurement.Failure) ms.get(1).outcome();
        assertEquals(MeasureError.COMPILE_ERROR, knob.error());
        assertTrue(knob.detail().contains("no knob unroll") && knob.detail().contains("conv2d#0"), knob.detail());
        Measurement.Failure vt = (Measurement.Failure) ms.get(2).outcome();
        assertTrue(vt.detail().contains("virtual threads must be 1 or 2, got 3"), vt.detail());
        assertTrue(ms.get(3).ok(), "the default fits: " + ms.get(3));
    }

    @Test
    void aLayerWhoseProgramComputesSomethingElseIsAWrongAnswerNotAFastOne() {
        // the same geometry, epilogue shape and ranges with other weights: one lowering checked against the other's Relay
        IRModule a = QuantizedRelay.conv(1, 3, 16, 16, 16, 3, 1, 1, DType.INT8, true, true, 1e-3, 2e-2);
        IRModule b = QuantizedRelay.conv(9, 3, 16, 16, 16, 3, 1, 1, DType.INT8, true, true, 1e-3, 2e-2);
        VtaLayerTask ta = VtaLayerTasks.of(a, CONFIG).getFirst(), tb = VtaLayerTasks.of(b, CONFIG).getFirst();
        VtaLayerTask crossed = new VtaLayerTask(ta.layer(), tb.reference(), CONFIG);
        List<ScheduleConfig> some = ta.candidates().subList(0, 2);
        for (Measurement m : new SimulatorMeasurer().measure(crossed, some)) {
            Measurement.Failure f = (Measurement.Failure) m.outcome();
            assertEquals(MeasureError.WRONG_ANSWER, f.error());
            assertTrue(f.detail().contains("differ from the interpreter's int8 result"), f.detail());
        }
        BaselineFailedException e = assertThrows(BaselineFailedException.class, () -> new SimulatorMeasurer().measureWithBaseline(crossed, some));
        assertEquals(MeasureError.WRONG_ANSWER, ((Measurement.Failure) e.baseline().outcome()).error());
        // the honest tasks measure, and as their keys are equal (same shapes, other values) so are their cycles
        assertEquals(ta.key(), tb.key());
        assertEquals(new SimulatorMeasurer().measure(ta, some).stream().map(Measurement::costUs).toList(),
                new SimulatorMeasurer().measure(tb, some).stream().map(Measurement::costUs).toList());
    }

    @Test
    void theTargetStringSaysEverythingTheCycleModelDependsOnAndParsesBack() {
        String t = VtaTarget.target(CONFIG);
        assertEquals("vta-sim -gemm=1x16x16 -uop=32768 -inp=32768 -wgt=262144 -acc=131072 -dma=8/0 -alu-ii=2 -clock-mhz=100", t);
        assertEquals(CONFIG, VtaTarget.parse(t));
        assertTrue(VtaTarget.isVta(t));
        assertTrue(!VtaTarget.isVta("c -mcpu=native"));
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class, () -> VtaTarget.parse("vta-sim -gemm=1x16x16"));
        assertTrue(missing.getMessage().contains("option -uop is missing"), missing.getMessage());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> VtaTarget.parse(t.replace("-gemm=1x16x16", "-gemm=1x16")));
        assertTrue(bad.getMessage().contains("-gemm=1x16 needs 3 integers"), bad.getMessage());
        IllegalArgumentException cls = assertThrows(IllegalArgumentException.class, () -> VtaTarget.configOf("vta-sim-1x32x32"));
        assertTrue(cls.getMessage().contains("vta-sim-1x16x16"), cls.getMessage());
        assertTrue(VtaTarget.device(CONFIG).model().contains("SIMULATOR"), "the device says it is simulated");
    }
}
