package dev.relayfarm.services;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The farm's services in one application; {@code relayfarm.roles} picks which run in this process
 * (see {@link dev.relayfarm.services.kit.ServiceRole}).
 */
@SpringBootApplication
public class RelayFarmServices {
    public static void main(String[] args) {
        SpringApplication.run(RelayFarmServices.class, args);
    }
}
