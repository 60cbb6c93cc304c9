package dev.relayfarm.tuning.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class WorkloadDistanceTest {
    @Test
    void shapesCompareOnALogScale() {
        String b8 = "nn.dense(data[8,512],weight[512,512])";
        assertEquals(0, WorkloadDistance.between(b8, b8));
        double batch = WorkloadDistance.between(b8, "nn.dense(data[16,512],weight[512,512])");
        double wide = WorkloadDistance.between(b8, "nn.dense(data[8,512],weight[1024,512])");
        assertTrue(batch > 0 && wide > 0 && Math.abs(batch - wide) < 0.1, batch + " vs " + wide);
        assertTrue(WorkloadDistance.between(b8, "nn.dense(data[16,512],weight[512,512])") < WorkloadDistance.between(b8, "nn.dense(data[64,512],weight[512,512])"));
    }

    @Test
    void dtypeNamesAreNotShapes() {
        assertEquals(0, WorkloadDistance.between("reduction([1,256]uint8,[10,256]int8->[1,10])", "reduction([1,256]int8,[10,256]int8->[1,10])"));
        assertEquals(0, WorkloadDistance.between("nn.conv2d(data[1,8,14,14],weight[16,8,5,5],dtype=uint8->int32)", "nn.conv2d(data[1,8,14,14],weight[16,8,5,5],dtype=int8->int32)"));
    }

    @Test
    void otherOperatorsAndArityAreInfinitelyFar() {
        assertEquals(Double.POSITIVE_INFINITY, WorkloadDistance.between("nn.conv2d(data[1,8])", "nn.dense(data[1,8])"));
        assertEquals(Double.POSITIVE_INFINITY, WorkloadDistance.between("nn.dense(data[1,8])", "nn.dense(data[1,8],weight[8,8])"));
    }
}
