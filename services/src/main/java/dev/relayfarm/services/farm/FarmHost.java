package dev.relayfarm.services.farm;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** This machine's name as the farm records it: in device ids ({@code HOST/NAME}) and worker ids. */
public final class FarmHost {
    private FarmHost() {}

    public static String name() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost"; // no resolvable name: the id stays unique per host through the agent's name and the pid
        }
    }
}
