package dev.devicebridge.snapshothelper.core;

import static org.junit.Assert.assertEquals;

import java.util.List;
import org.junit.Test;

public class MotionScheduleTest {
    @Test
    public void swipeIsDownMovesUp() {
        List<MotionSchedule.Step> steps = MotionSchedule.of(TouchPlanParser.parseJson(TouchPlanParserTest.SWIPE));
        assertEquals(3, steps.size());
        assertEquals(MotionSchedule.ACTION_DOWN, steps.get(0).action);
        assertEquals(MotionSchedule.ACTION_MOVE, steps.get(1).action);
        assertEquals(MotionSchedule.ACTION_UP, steps.get(2).action);
        assertEquals(150, steps.get(1).offsetMs);
        assertEquals(300, steps.get(2).offsetMs);
        assertEquals(200, steps.get(2).xs[0], 0);
    }

    @Test
    public void transformAddsSecondPointerAndLiftsBoth() {
        List<MotionSchedule.Step> steps = MotionSchedule.of(TouchPlanParser.parseJson(TouchPlanParserTest.PINCH));
        assertEquals(3 + 3, steps.size());
        int[] actions = new int[steps.size()];
        for (int i = 0; i < actions.length; i++) actions[i] = steps.get(i).action;
        assertEquals(MotionSchedule.ACTION_DOWN, actions[0]);
        assertEquals(MotionSchedule.ACTION_POINTER_DOWN | 1 << 8, actions[1]);
        assertEquals(MotionSchedule.ACTION_MOVE, actions[2]);
        assertEquals(MotionSchedule.ACTION_MOVE, actions[3]);
        assertEquals(MotionSchedule.ACTION_POINTER_UP | 1 << 8, actions[4]);
        assertEquals(MotionSchedule.ACTION_UP, actions[5]);
        assertEquals(1, steps.get(0).pointerCount());
        assertEquals(2, steps.get(1).pointerCount());
        assertEquals(1, steps.get(5).pointerCount());
        assertEquals(70, steps.get(4).xs[1], 0);
        assertEquals(100, steps.get(4).offsetMs);
    }
}
