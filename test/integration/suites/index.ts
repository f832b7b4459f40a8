// Every integration suite, in the order they run.
import './activation.test';
import './jobs.test';
import './remote.test';
import './hostile-service.test';
import './ux.test';
import './queue.test';
import './voices.test';
