"""Reading what other tools wrote of a training: MindSpore summary folders (SummaryCollector, SummaryRecord, the
files MindInsight read) and TensorBoard event files, into typed contents the studio imports
(core/app/summary_import.py). No store and no MindSpore graph here: the message classes only."""
