package dev.devicebridge.glassagent.core;

/**
 * One connection's streamed touch (the {@code touch} op): one finger that goes down, moves, and goes
 * up or is cancelled, each step its own request, injected as it comes. From DOWN to UP or CANCEL
 * every event carries the down time of the DOWN, so the device sees one MotionEvent stream.
 *
 * <ul>
 *   <li>{@code down}: a finger goes down at (x, y). When the last one is still down, it is cancelled
 *       first (CANCEL at its last point), so the device never holds two.</li>
 *   <li>{@code move} and {@code up} need a finger down; (x, y) is where it is now.</li>
 *   <li>{@code cancel} ends the stream at its last point without a click (ACTION_CANCEL); nothing
 *       when no finger is down. x and y are not needed.</li>
 *   <li>{@link #release}: the connection ended with a finger down: CANCEL at its last point.</li>
 * </ul>
 *
 * A finger stays down until its UP or CANCEL was injected: a refused UP can be sent again, and the
 * connection's end still releases it.
 */
public final class TouchStream {
    /** MotionEvent's action values. */
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public static final int ACTION_MOVE = 2;
    public static final int ACTION_CANCEL = 3;

    private final Agent agent;
    private boolean down;
    private long downTime;
    private double lastX;
    private double lastY;

    public TouchStream(Agent agent) {
        this.agent = agent;
    }

    /** Whether a finger is down. */
    public boolean isDown() {
        return down;
    }

    /** One step: {@code action} is down, move, up or cancel; x and y are null when absent or not finite. */
    public void handle(String action, Double x, Double y) throws Exception {
        if ("cancel".equals(action)) {
            if (down) end(ACTION_CANCEL, lastX, lastY);
            return;
        }
        if (!"down".equals(action) && !"move".equals(action) && !"up".equals(action)) {
            throw new IllegalArgumentException("action must be down, move, up or cancel");
        }
        if (x == null || y == null) throw new IllegalArgumentException("touch " + action + ": x and y must be finite numbers");
        if ("down".equals(action)) {
            if (down) end(ACTION_CANCEL, lastX, lastY);
            long now = agent.uptimeMillis();
            agent.touch(ACTION_DOWN, now, now, x, y);
            down = true;
            downTime = now;
        } else if (!down) {
            throw new IllegalStateException("touch " + action + " without a touch down");
        } else if ("move".equals(action)) {
            agent.touch(ACTION_MOVE, downTime, agent.uptimeMillis(), x, y);
        } else {
            end(ACTION_UP, x, y);
            return;
        }
        lastX = x;
        lastY = y;
    }

    /** The connection ended: a finger still down is cancelled where it last was. */
    public void release() throws Exception {
        if (down) end(ACTION_CANCEL, lastX, lastY);
    }

    private void end(int action, double x, double y) throws Exception {
        agent.touch(action, downTime, agent.uptimeMillis(), x, y);
        down = false;
        lastX = x;
        lastY = y;
    }
}
