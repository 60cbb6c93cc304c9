/**
 * VTA layer schedules as tuning records: a layer as a task ({@code VtaLayerTask}: workload key, schedule knobs as a
 * config), the simulated device and target the records name ({@code VtaTarget}: class {@code vta-sim-1x16x16}, cost =
 * simulated cycles at a stated clock), the simulator measurer with its bit-exact check, the grid tuner writing records
 * and the rule applying the best stored schedule ({@code VtaRecords}).
 */
package dev.relayfarm.vta.tuning;
