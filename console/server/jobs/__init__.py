"""The server's jobs wing: the jobs API, schedules, the scheduler thread, one job run, webhooks."""
