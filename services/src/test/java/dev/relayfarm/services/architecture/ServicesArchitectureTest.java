package dev.relayfarm.services.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The services' structure: the gateway and the stage services are thin shells that share only the service kit
 * (envelopes, stage processing, topology) and the store (PostgreSQL, where the job lifecycle has its one owner);
 * neither reaches into the other's internals, and the store knows nothing of Kafka or of how it is deployed.
 */
class ServicesArchitectureTest {
    private static JavaClasses services;

    @BeforeAll
    static void importServices() {
        services = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.relayfarm.services");
    }

    @Test
    void noPackageCycles() {
        slices().matching("dev.relayfarm.services.(**)").should().beFreeOfCycles().check(services);
    }

    @Test
    void theGatewayAndTheStagesDoNotImportEachOther() {
        noClasses().that().resideInAPackage("dev.relayfarm.services.gateway..").should().dependOnClassesThat()
                .resideInAPackage("dev.relayfarm.services.stages..").check(services);
        noClasses().that().resideInAPackage("dev.relayfarm.services.stages..").should().dependOnClassesThat()
                .resideInAPackage("dev.relayfarm.services.gateway..").check(services);
    }

    @Test
    void theStoreIsBelowTheServices() {
        noClasses().that().resideInAPackage("dev.relayfarm.services.store..").should().dependOnClassesThat()
                .resideInAnyPackage("dev.relayfarm.services.kit..", "dev.relayfarm.services.gateway..", "dev.relayfarm.services.stages..",
                        "dev.relayfarm.services.dashboard..", "org.apache.kafka..", "org.springframework.kafka..")
                .check(services);
    }

    /** The dashboard sits on the gateway (its tokens, roles and request classes); nothing below knows about pages. */
    @Test
    void theDashboardIsAboveTheGatewayAndTheStagesNeverSeeIt() {
        noClasses().that().resideInAnyPackage("dev.relayfarm.services.gateway..", "dev.relayfarm.services.stages..", "dev.relayfarm.services.kit..",
                "dev.relayfarm.services.farm..").should().dependOnClassesThat().resideInAPackage("dev.relayfarm.services.dashboard..").check(services);
        noClasses().that().resideInAPackage("dev.relayfarm.services.dashboard..").should().dependOnClassesThat()
                .resideInAPackage("dev.relayfarm.services.stages..").check(services);
    }
}
