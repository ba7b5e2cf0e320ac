package dev.devicebridge.snapshothelper.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The motion events a touch plan turns into, each at its offset from the gesture's down time.
 *
 * swipe (one pointer, n samples): DOWN at sample 0, MOVE at samples 1 … n-2, UP at sample n-1: n
 * events. transform (two pointers, n shared offsets): DOWN (pointer 0) and POINTER_DOWN (pointer 1)
 * at sample 0, MOVE of both at samples 1 … n-1, then POINTER_UP (pointer 1) and UP (pointer 0) at
 * the last sample: n + 3 events. Actions use MotionEvent's constants.
 */
public final class MotionSchedule {
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public static final int ACTION_MOVE = 2;
    public static final int ACTION_POINTER_DOWN = 5;
    public static final int ACTION_POINTER_UP = 6;
    /** MotionEvent.ACTION_POINTER_INDEX_SHIFT. */
    public static final int POINTER_INDEX_SHIFT = 8;

    /** One event: the masked action (with the pointer index for POINTER_DOWN/UP) and every pointer's position. */
    public static final class Step {
        public final int action;
        public final long offsetMs;
        public final int[] pointerIds;
        public final double[] xs;
        public final double[] ys;

        Step(int action, long offsetMs, int[] pointerIds, double[] xs, double[] ys) {
            this.action = action;
            this.offsetMs = offsetMs;
            this.pointerIds = pointerIds;
            this.xs = xs;
            this.ys = ys;
        }

        public int pointerCount() {
            return pointerIds.length;
        }
    }

    private MotionSchedule() {}

    public static List<Step> of(TouchPlan plan) {
        List<Step> steps = new ArrayList<Step>();
        if (plan.pointers.size() == 1) {
            List<TouchPlan.Sample> s = plan.pointers.get(0).samples;
            int last = s.size() - 1;
            for (int i = 0; i <= last; i++) {
                int action = i == 0 ? ACTION_DOWN : i == last ? ACTION_UP : ACTION_MOVE;
                TouchPlan.Sample p = s.get(i);
                steps.add(new Step(action, p.offsetMs, new int[] {0}, new double[] {p.x}, new double[] {p.y}));
            }
            return Collections.unmodifiableList(steps);
        }
        List<TouchPlan.Sample> a = plan.pointers.get(0).samples;
        List<TouchPlan.Sample> b = plan.pointers.get(1).samples;
        int last = a.size() - 1;
        TouchPlan.Sample a0 = a.get(0);
        TouchPlan.Sample b0 = b.get(0);
        steps.add(new Step(ACTION_DOWN, a0.offsetMs, new int[] {0}, new double[] {a0.x}, new double[] {a0.y}));
        steps.add(two(ACTION_POINTER_DOWN | 1 << POINTER_INDEX_SHIFT, a0, b0));
        for (int i = 1; i <= last; i++) steps.add(two(ACTION_MOVE, a.get(i), b.get(i)));
        TouchPlan.Sample an = a.get(last);
        steps.add(two(ACTION_POINTER_UP | 1 << POINTER_INDEX_SHIFT, an, b.get(last)));
        steps.add(new Step(ACTION_UP, an.offsetMs, new int[] {0}, new double[] {an.x}, new double[] {an.y}));
        return Collections.unmodifiableList(steps);
    }

    private static Step two(int action, TouchPlan.Sample a, TouchPlan.Sample b) {
        return new Step(action, a.offsetMs, new int[] {0, 1}, new double[] {a.x, b.x}, new double[] {a.y, b.y});
    }
}
