package dev.relayfarm.services.kit;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the pipeline's topics are created when missing ({@code relayfarm.topics.*}).
 *
 * @param partitions partitions of each pipeline topic: they bound how many consumers of one stage work in parallel
 * @param replicas   replicas of each topic (1 for a single broker)
 */
@ConfigurationProperties("relayfarm.topics")
public record TopicsProperties(@DefaultValue("3") int partitions, @DefaultValue("1") short replicas) {}
