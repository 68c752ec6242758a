import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';
import '../pipeline/app/debug-hook.ts';

mount(App, { target: document.getElementById('app')! });
