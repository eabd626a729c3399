mod launch;
